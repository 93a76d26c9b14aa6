"""A type stuck on a variable prints as the definition applied, as written, not as the
definition's body unfolded (probe s29 types finding 5): `(T n)` was shown as T's whole
nat-eliminate.  Evaluation and conversion are unchanged: only messages (and `bobc eval --type`)
read the name back; a failed proof's sides still show what they computed."""
from __future__ import annotations

import subprocess
import sys

import pytest

from bobc.errors import BobcError
from bobc.language import load_program
from bobc.targets import SM86

T = ("def T : (pi unrestricted n : Nat . Type 0) = (lambda unrestricted n : Nat . "
     "(nat-eliminate (lambda unrestricted k : Nat . Type 0) Nat (lambda unrestricted k : Nat . "
     "(lambda unrestricted below : Type 0 . Bytes)) n))\n"
     "def U : (pi unrestricted a : Nat . (pi unrestricted n : Nat . Type 0)) = "
     "(lambda unrestricted a : Nat . (lambda unrestricted n : Nat . (T n)))\n")
UNFOLDED = "(nat-eliminate (lambda unrestricted k : Nat . Type 0) Nat"


def plan(tmp_path, text):
    path = tmp_path / "Stuck.bob"
    path.write_text("module Stuck\n" + T + text + "\n", encoding="utf-8")
    return path


def refusal(tmp_path, text):
    with pytest.raises(BobcError) as caught:
        load_program(plan(tmp_path, text), target=SM86).check()
    return caught.value.message


def test_an_expected_type_stuck_on_a_variable_prints_by_name(tmp_path):
    message = refusal(tmp_path, "def f : (pi unrestricted n : Nat . (T n)) = "
                                "(lambda unrestricted n : Nat . 3)")
    assert message == "in f: type mismatch: this expression should have type\n    (T n)\n  but has type\n    Nat"


def test_a_curried_definition_prints_with_all_its_arguments(tmp_path):
    message = refusal(tmp_path, "def g : (pi unrestricted n : Nat . (U 3 n)) = "
                                "(lambda unrestricted n : Nat . b\"\")")
    assert "should have type\n    (U 3 n)\n" in message and UNFOLDED not in message


def test_a_motive_applied_prints_by_name(tmp_path):
    message = refusal(tmp_path, "family Color : Type 0\nconstructor ColorRed\nend-family\n"
                                "def h : (pi unrestricted n : Nat . Nat) = (lambda unrestricted n : Nat . "
                                "(eliminate Color (lambda unrestricted c : (family Color) . (U 1 n)) "
                                "(constructor Color ColorRed) (branch ColorRed . 4)))")
    assert "should have type\n    (U 1 n)\n  but has type\n    Nat" in message


def test_the_name_does_not_change_what_converts(tmp_path):
    # (T n) and its unfolding are one type; (T n) and (T m) are not
    program = load_program(plan(tmp_path, "def same : (pi unrestricted n : Nat . (pi unrestricted x : "
                                          "(T n) . " + UNFOLDED + " (lambda unrestricted k : Nat . "
                                          "(lambda unrestricted below : Type 0 . Bytes)) n))) = "
                                          "(lambda unrestricted n : Nat . (lambda unrestricted x : (T n) . x))"), target=SM86)
    program.check()
    message = refusal(tmp_path, "def other : (pi unrestricted n : Nat . (pi unrestricted m : Nat . "
                                "(pi unrestricted x : (T n) . (T m)))) = (lambda unrestricted n : Nat . "
                                "(lambda unrestricted m : Nat . (lambda unrestricted x : (T n) . x)))")
    assert "should have type\n    (T m)\n  but has type\n    (T n)" in message


def test_values_are_unchanged(tmp_path):
    program = load_program(plan(tmp_path, "def t0 : Type 0 = (T 0)\ndef t2 : Type 0 = (U 7 2)"), target=SM86)
    program.check()
    from bobc.language.values import VBytesType, VNatType, force
    assert isinstance(force(program.value("t0")), VNatType)
    assert isinstance(force(program.value("t2")), VBytesType)


def test_a_failed_proof_still_shows_what_its_sides_computed(tmp_path):
    message = refusal(tmp_path, "def add : (pi unrestricted a : Nat . (pi unrestricted b : Nat . Nat)) = "
                                "(lambda unrestricted a : Nat . (lambda unrestricted b : Nat . (nat-add a b)))\n"
                                "def p : (pi unrestricted n : Nat . (equal Nat (add n 0) n)) = "
                                "(lambda unrestricted n : Nat . (refl Nat n))")
    assert "left:  (nat-add n 0)\n    right: n" in message


def test_eval_type_prints_by_name(tmp_path):
    path = plan(tmp_path, "def f : (pi unrestricted n : Nat . (pi unrestricted x : (T n) . (T n))) = "
                          "(lambda unrestricted n : Nat . (lambda unrestricted x : (T n) . x))")
    done = subprocess.run([sys.executable, "-m", "bobc", "eval", str(path), "f", "--type"],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "(pi unrestricted n : Nat . (pi unrestricted x : (T n) . (T n)))"
