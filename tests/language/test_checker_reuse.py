"""`bobc eval` and `bobc check` ask the type checker about one definition at a time; the program
keeps one checker, so what it inferred is reused (probe s28 lang finding 3: a fresh checker per
question re-inferred a chain of definitions without types below each one, quadratic: 2,000
definitions took ~15 s, 100,000 never finished).  And a dependency's refusal is reworded
for `bobc eval` without rebuilding the error (finding 1: a LimitExceeded rebuilt as
type(error)(message, span=, hint=) was a TypeError traceback)."""
from __future__ import annotations

import pytest

from bobc import pipeline
from bobc.commands.eval import check_reachable, depends_on
from bobc.errors import BobcError, Span
from bobc.language import limits, load_program
from bobc.targets import SM86
from bobc.language.check import Checker, TypeCheckError
from bobc.language.limits import LimitExceeded
from bobc.language.values import EvalError


def _chain(tmp_path, count: int, name: str = "Chain"):
    lines = [f"module {name}", "def d0 = 0"]
    lines += [f"def d{i} = (succ d{i - 1})" for i in range(1, count + 1)]
    path = tmp_path / f"{name}.bob"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def _work(tmp_path, monkeypatch, count: int) -> int:
    """Definitions the checker checks or infers for `bobc check`'s and `bobc eval`'s questions."""
    done = []
    original = Checker.check_definition

    def counted(checker, definition):
        if definition not in checker.checked_bodies:
            done.append(definition.name)
        return original(checker, definition)

    monkeypatch.setattr(Checker, "check_definition", counted)
    program = load_program(_chain(tmp_path, count, f"Chain{count}"), target=SM86)
    assert pipeline.bytes_definitions(program) == []       # a type_of for each definition
    check_reachable(program, f"d{count}")                   # a check_definition for each
    program.check()
    assert program.value(f"d{count}").value == count
    return len(done)


def test_checking_a_chain_without_types_is_linear(tmp_path, monkeypatch):
    small, large = _work(tmp_path, monkeypatch, 200), _work(tmp_path, monkeypatch, 400)
    assert small == 201 and large == 401, (small, large)   # each definition once


def test_a_refusal_is_found_again_the_same_each_time(tmp_path):
    path = tmp_path / "Bad.bob"
    path.write_text("module Bad\ndef a = b\"x\"\ndef b = (succ a)\ndef c = (succ b)\n", encoding="utf-8")
    program = load_program(path, target=SM86)
    messages = []
    for name in ("c", "b", "c"):
        with pytest.raises(TypeCheckError) as caught:
            program.type_of(name)
        messages.append(caught.value.render())
    assert messages[0] == messages[1] == messages[2]
    assert "Bad.bob:3:" in messages[0]
    assert program.type_of("a").__class__.__name__ == "VBytesType"


def test_a_family_that_fails_is_refused_every_time(tmp_path):
    path = tmp_path / "Fam.bob"
    path.write_text("module Fam\nfamily F : Type 0\nconstructor C\nfield unrestricted x : Type 0\n"
                    "end-family\ndef v : (family F) = (record F (x = Nat))\n", encoding="utf-8")
    program = load_program(path, target=SM86)
    for _ in range(2):
        with pytest.raises(TypeCheckError, match="too large for a family"):
            program.type_of("v")


def test_one_question_20_thousand_definitions_deep(tmp_path):
    program = load_program(_chain(tmp_path, 20_000), target=SM86)
    check_reachable(program, "d20000")      # recursion past the first try's limit: a big stack
    # the first try's unfinished part is done again on the big stack, nothing more
    assert 20_001 <= program.checker().inferences < 2 * 20_001


# ---- finding 1 ----------------------------------------------------------------------------

TOO_LONG = """module Tb
def mot : (pi unrestricted n : Nat . Type 0) = (lambda unrestricted n : Nat . Nat)
def count : (pi unrestricted n : Nat . Nat) =
  (lambda unrestricted n : Nat . (nat-eliminate mot 0 (lambda unrestricted k : Nat . (lambda unrestricted acc : Nat . (succ acc))) n))
def updates : Nat = 2000000
def updatesCounted : (equal Nat (count updates) updates) = (refl Nat updates)
def answer : Nat = (let unrestricted proof = updatesCounted in updates)
def wrong : (equal Nat 1 2) = (refl Nat 1)
def usesWrong : Nat = (let unrestricted proof = wrong in 0)
def loose = 5
def usesLoose : Nat = loose
def loop : (pi unrestricted n : Nat . Nat) =
  (lambda unrestricted n : Nat . (nat-eliminate mot 0 (lambda unrestricted k : Nat . (lambda unrestricted acc : Nat . (nat-add acc 1))) n))
def tooMany : Nat = (loop 20)
"""


@pytest.fixture
def plan(tmp_path):
    path = tmp_path / "Tb.bob"
    path.write_text(TOO_LONG, encoding="utf-8")
    return path


def test_eval_of_a_definition_whose_dependency_meets_a_limit(plan, capsys):
    from bobc.cli import main

    assert main(["eval", str(plan), "answer"]) == 1
    err = capsys.readouterr().err
    assert "Traceback" not in err and "TypeError" not in err, err
    assert f"{plan}:4:34: error: answer cannot be evaluated: it depends on Tb.updatesCounted, which " \
           "does not type check: nat-eliminate runs 2,000,000 iterations: more than the limit of " \
           "1,048,576 (docs/limits.md), in definition updatesCounted" in err, err


def test_eval_of_a_proof_that_meets_a_limit_names_it(plan, capsys):
    from bobc.cli import main

    assert main(["eval", str(plan), "updatesCounted"]) == 1
    err = capsys.readouterr().err
    assert "more than the limit of 1,048,576 (docs/limits.md), in definition updatesCounted" in err, err


def test_eval_with_a_step_limit_a_dependency_meets(plan, capsys, monkeypatch):
    from bobc.cli import main

    monkeypatch.setattr(limits, "EVALUATION_STEPS", limits.EVALUATION_STEPS)    # main sets it
    assert main(["eval", str(plan), "tooMany", "--max-evaluation-steps", "1"]) == 1
    err = capsys.readouterr().err
    assert "tooMany cannot be evaluated: it depends on Tb.loop, which does not type check: evaluation " \
           "steps: more than the limit of 1 (docs/limits.md), in definition loop" in err, err


def test_eval_of_a_definition_whose_dependency_is_ill_typed(plan, capsys):
    from bobc.cli import main

    assert main(["eval", str(plan), "usesWrong"]) == 1
    err = capsys.readouterr().err
    assert "usesWrong cannot be evaluated: it depends on Tb.wrong, which does not type check: " \
           "the equality wrong claims does not hold" in err, err


class _Odd(BobcError):
    """A BobcError subclass whose constructor takes other arguments (as a backend's may)."""

    exit_code = 7

    def __init__(self, code: int, where):
        super().__init__(f"odd failure {code}", where, hint=None)
        self.code = code


@pytest.mark.parametrize("error", [
    LimitExceeded("nat-eliminate runs 3 iterations", 2, Span("P.bob", 4, 5)),
    TypeCheckError("in x: type mismatch", Span("P.bob", 2, 3), hint="fix it"),
    EvalError("no handler", Span("P.bob", 1, 1)),
    BobcError("plain"),
    _Odd(3, Span("P.bob", 9, 9)),
], ids=lambda e: type(e).__name__)
def test_depends_on_keeps_every_error_class_and_its_fields(error):
    before = {k: v for k, v in vars(error).items() if k not in ("message", "hint")}
    hint = error.hint
    reworded = depends_on(error, "top", "P.other")
    assert reworded is error and type(reworded) is type(error)
    assert {k: v for k, v in vars(reworded).items() if k not in ("message", "hint")} == before
    assert reworded.message.startswith("top cannot be evaluated: it depends on P.other, which does "
                                       "not type check: ")
    assert str(reworded) == reworded.message
    assert reworded.hint == (hint or "fix P.other, or pass --unchecked to evaluate anyway")
    assert reworded.render().startswith(f"{reworded.span}: error: top cannot" if reworded.span
                                        else "error: top cannot")
