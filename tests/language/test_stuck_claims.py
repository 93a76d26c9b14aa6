"""A proof by computation whose sides are stuck on a variable says that computation cannot
decide it, not that the sides "compute to different values" (probe s29 types finding 6:
`(equal Nat (naturalAdd n 0) n)` is true for every n, but nat-add on a variable does not
reduce, and the refusal called the claim false).  Sides that compute to different values keep
the old refusal; a claim that holds with refl of another value says so."""
from __future__ import annotations

import pytest

from bobc.errors import BobcError
from bobc.language import load_program
from bobc.targets import SM86


def refusal(tmp_path, text):
    path = tmp_path / "Claims.bob"
    path.write_text("module Claims\n\n" + text + "\n", encoding="utf-8")
    with pytest.raises(BobcError) as caught:
        load_program(path, target=SM86).check()
    return caught.value.message, caught.value.hint or ""


def test_a_claim_stuck_on_a_variable_cannot_be_decided_by_computation(tmp_path):
    message, hint = refusal(tmp_path, "def f : (pi unrestricted n : Nat . (equal Nat (nat-add n 0) "
                                      "n)) = (lambda unrestricted n : Nat . (refl Nat n))")
    assert message.startswith("the equality f claims cannot be decided by computation: its "
                              "sides do not reduce to values (they are stuck on the variable n)")
    assert "different values" not in message
    assert "left:  (nat-add n 0)\n    right: n" in message
    assert "by computation only" in hint


def test_a_stuck_field_inside_one_constructor_is_found(tmp_path):
    message, _ = refusal(tmp_path, "family Box : Type 0\nconstructor BoxOf\nfield unrestricted "
                                   "inner : Nat\nend-family\n"
                                   "def f : (pi unrestricted m : Nat . (equal (family Box) "
                                   "(constructor Box BoxOf (nat-multiply m 1)) (constructor Box "
                                   "BoxOf m))) = (lambda unrestricted m : Nat . (refl (family Box) "
                                   "(constructor Box BoxOf m)))")
    assert "cannot be decided by computation" in message and "the variable m" in message


def test_sides_that_compute_to_different_values_are_refused_as_before(tmp_path):
    message, hint = refusal(tmp_path, "def f : (equal Nat (nat-add 2 2) 5) = (refl Nat 4)")
    assert message.startswith("the equality f claims does not hold: its two sides compute to "
                              "different values\n    left:  4 (0x4)\n    right: 5 (0x5)")
    assert hint == "fix the definitions the two sides are computed from, or the claim"


def test_different_constructors_around_a_variable_compute_to_different_values(tmp_path):
    message, _ = refusal(tmp_path, "family Two : Type 0\nconstructor TwoA\nfield unrestricted "
                                   "a : Nat\nconstructor TwoB\nfield unrestricted b : Nat\n"
                                   "end-family\n"
                                   "def f : (pi unrestricted m : Nat . (equal (family Two) "
                                   "(constructor Two TwoA m) (constructor Two TwoB m))) = "
                                   "(lambda unrestricted m : Nat . (refl (family Two) "
                                   "(constructor Two TwoA m)))")
    assert "compute to different values" in message


def test_a_claim_that_holds_with_refl_of_another_value_says_so(tmp_path):
    message, hint = refusal(tmp_path, "def f : (equal Nat 2 2) = (refl Nat 3)")
    assert message == ("the equality f claims holds, but refl's value is not its sides' value\n"
                       "    refl:  3 (0x3)\n    sides: 2 (0x2)")
    assert hint == "write (refl Nat X) with X one side of the claim"
