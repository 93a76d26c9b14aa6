"""A definition another one uses is type checked before that use (probe s43 langsound finding 1).

A type that names a definition evaluates its body: `def x : T = 3` forces T.  The checker took T
at its declared type and evaluated its body unchecked, so a plan whose T was ill typed was
refused by the evaluator ("nat-add expects Nat arguments, got a byte string of length 1", no
types, no "in T:"), or with T a number, as `x` having the wrong type ("should have type 5"), and
`bobc eval x` did not say that x depends on a definition that does not type check
(docs/language.md, "Python API").  The expected refusals are the ones docs/language.md states for
an ill-typed body: the definition's name, the expected and found types, at the expression.
"""
from __future__ import annotations

import pytest

from bobc.cli import main
from bobc.errors import BobcError
from bobc.language import load_program
from bobc.language.check import ClaimDoesNotHold, TypeCheckError
from bobc.targets import SM86


def plan(tmp_path, body: str):
    path = tmp_path / "Used.bob"
    path.write_text("module Used\n" + body, encoding="utf-8")
    return path


def refusal(path) -> BobcError:
    with pytest.raises(BobcError) as caught:
        load_program(path, target=SM86).check()
    return caught.value


def test_a_type_naming_an_ill_typed_definition_is_refused_as_that_definitions_type_error(tmp_path):
    # nat-add : (pi a : Nat . (pi b : Nat . Nat)) (docs/language.md, "Primitives"): b"x" is no Nat
    error = refusal(plan(tmp_path, "def x : T = 3\ndef T : Type 0 = (nat-add b\"x\" 1)\n"))
    assert type(error) is TypeCheckError
    assert error.message.startswith("in T: type mismatch: this argument of nat-add should have type")
    assert "    Nat\n  but has type\n    Bytes" in error.message
    assert (error.span.line, error.span.column) == (3, 27)      # the b"x"


def test_a_number_is_not_taken_for_a_type(tmp_path):
    # 5 : Nat, and T claims Type 0: T is at fault, not x (the old message said x "should have type 5")
    error = refusal(plan(tmp_path, "def x : T = 3\ndef T : Type 0 = 5\n"))
    assert error.message.startswith("in T: type mismatch")
    assert "should have type\n    Type 0\n  but has type\n    Nat" in error.message
    assert (error.span.line, error.span.column) == (3, 18)


def test_a_type_level_function_of_the_wrong_family_is_refused_by_its_type(tmp_path):
    error = refusal(plan(tmp_path, (
        "def x : (F 3) = 3\n"
        "def F : (pi unrestricted n : Nat . Type 0) = (lambda unrestricted n : Nat . (eliminate "
        "Unit (lambda unrestricted u : (family Unit) . Type 0) n (branch MkUnit . Nat)))\n"
        "family Unit : Type 0\nconstructor MkUnit\nend-family\n")))
    assert type(error) is TypeCheckError
    assert error.message == "in F: eliminate Unit needs a value of family Unit, but this has type Nat"


def test_bobc_eval_says_the_definition_depends_on_one_that_does_not_type_check(tmp_path, capsys):
    path = plan(tmp_path, "def x : T = 3\ndef T : Type 0 = (nat-add b\"x\" 1)\n")
    assert main(["eval", str(path), "x"]) == 1
    err = capsys.readouterr().err
    assert "x cannot be evaluated: it depends on Used.T, which does not type check: in T: " \
           "type mismatch" in err
    assert "expects Nat arguments" not in err


def test_a_used_claim_that_does_not_hold_is_reported_as_itself(tmp_path):
    # x's type uses c, a well-typed claim that does not hold (1 is not 2): x type checks, and
    # the claim is the only error, reported at c (past_failed_claims: everything else checks)
    path = plan(tmp_path, (
        "def x : (F c) = 3\n"
        "def F : (pi unrestricted p : (equal Nat 1 2) . Type 0) = "
        "(lambda unrestricted p : (equal Nat 1 2) . Nat)\n"
        "def c : (equal Nat 1 2) = (refl Nat 1)\n"))
    error = refusal(path)
    assert type(error) is ClaimDoesNotHold and error.span.line == 4
    program = load_program(path, target=SM86)
    with pytest.raises(ClaimDoesNotHold) as caught:
        program.check(past_failed_claims=True)
    assert caught.value.only_failed_claims is True
