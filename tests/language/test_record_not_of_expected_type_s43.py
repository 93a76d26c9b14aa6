"""A record checked against a type that is no family of its own is refused as not a value of that
type (probe s43 langsound finding 3): a record of a family with parameters, whose type cannot be
inferred, was refused as "cannot tell the parameters of Pair from this record alone", with the
hint "give it a type", where it had one (`def x : Nat = (record Pair ...)`).  The expected wording
follows the lambda's ("a function is not a value of type Nat", docs/language.md "Type checking":
records are checked against the type expected of them)."""
from __future__ import annotations

import pytest

from bobc.language import load_program
from bobc.language.check import TypeCheckError
from bobc.targets import SM86

PAIR = ("module R\nfamily Pair (A : Type 0) (B : Type 0) : Type 0\nconstructor MkPair\n"
        "field unrestricted first : A\nfield unrestricted second : B\nend-family\n")


def refusal(tmp_path, definition: str) -> TypeCheckError:
    path = tmp_path / "R.bob"
    path.write_text(PAIR + definition + "\n", encoding="utf-8")
    with pytest.raises(TypeCheckError) as caught:
        load_program(path, target=SM86).check()
    return caught.value


def test_a_record_where_a_nat_is_expected(tmp_path):
    error = refusal(tmp_path, "def x : Nat = (record Pair (first = 1) (second = 2))")
    assert error.message == "in x: a record of Pair is not a value of type Nat"
    assert error.hint == "a record of Pair has type (family Pair A B)"
    assert (error.span.line, error.span.column) == (7, 15)


def test_a_record_where_another_family_is_expected(tmp_path):
    error = refusal(tmp_path, "family Box : Type 0\nconstructor MkBox\nend-family\n"
                              "def x : (family Box) = (record Pair (first = 1) (second = 2))")
    assert error.message == "in x: a record of Pair is not a value of type (family Box)"


def test_a_record_with_no_type_at_all_still_asks_for_one(tmp_path):
    error = refusal(tmp_path, "def x = (record Pair (first = 1) (second = 2))")
    assert "cannot tell the parameters of Pair from this record alone" in error.message
