"""A claim that two functions are equal, whose bodies are stuck on the bound variable, cannot be
decided by computation; it is not "two sides compute to different values" (probe s46 plantexts2
finding 4).  docs/language.md ("equal / refl"): "where the sides are stuck on a variable
(`(nat-add n 0)` against `n`) rather than two different values, it says computation cannot
decide the claim".  Conversion compares functions by applying both to a fresh variable (eta),
so `(lambda y . (nat-add y 0))` against `(lambda z . z)` is `(nat-add y 0)` against `y`: the
case the doc names, one binder down -- a claim true for every argument, which the refusal called
false.  Functions whose bodies are different values (`(lambda x . 1)`, `(lambda x . 2)`) still
compute to different values."""
from __future__ import annotations

import pytest

from bobc.errors import BobcError
from bobc.language import load_program
from bobc.targets import SM86

FN = "(pi unrestricted x : Nat . Nat)"


def refusal(tmp_path, text):
    path = tmp_path / "Claims.bob"
    path.write_text("module Claims\n\n" + text + "\n", encoding="utf-8")
    with pytest.raises(BobcError) as caught:
        load_program(path, target=SM86).check()
    return caught.value.message, caught.value.hint or ""


@pytest.mark.parametrize("left, right, variable", [
    ("(lambda unrestricted y : Nat . (nat-add y 0))", "(lambda unrestricted z : Nat . z)", "y"),
    ("(lambda unrestricted a : Nat . (lambda unrestricted b : Nat . (nat-multiply a 1)))",
     "(lambda unrestricted a : Nat . (lambda unrestricted b : Nat . a))", "a"),
    ("(nat-add 0)", "(lambda unrestricted z : Nat . z)", "z"),
])
def test_functions_stuck_under_their_binder_cannot_be_decided_s46(tmp_path, left, right, variable):
    kind = FN if "lambda unrestricted b" not in left else \
        "(pi unrestricted a : Nat . (pi unrestricted b : Nat . Nat))"
    message, hint = refusal(tmp_path, f"def f : (equal {kind} {left} {right}) = (refl {kind} {right})")
    assert message.startswith("the equality f claims cannot be decided by computation"), message
    assert f"stuck on the variable {variable}" in message, message
    assert "different values" not in message
    assert "by computation only" in hint


def test_functions_of_different_values_still_do_not_hold_s46(tmp_path):
    message, _ = refusal(tmp_path, f"def f : (equal {FN} (lambda unrestricted x : Nat . 1) "
                                   f"(lambda unrestricted x : Nat . 2)) = (refl {FN} (lambda unrestricted x : Nat . 1))")
    assert message.startswith("the equality f claims does not hold: its two sides compute to "
                              "different values"), message
