"""Did-you-mean weighs every name a plan can mean, closest first (probe s29 types finding 8):
built-in types (Nat, Bytes), primitives (nat-add ...) and the local binders in scope were never
suggested, `naturalAd` put naturalAnd before naturalAdd, and `bobc eval FILE NAME` with an
unknown NAME suggested nothing.  Also finding 9's message items: a field read as a function,
a record field of a family without fields, the motive's wording, the limit hint."""
from __future__ import annotations

import subprocess
import sys

import pytest

from bobc.errors import BobcError
from bobc.language import load_program
from bobc.targets import SM86
from bobc.language.suggest import closest


def refusal(tmp_path, text, imports=""):
    path = tmp_path / "Mean.bob"
    path.write_text("module Mean\n\n" + imports + text + "\n", encoding="utf-8")
    with pytest.raises(BobcError) as caught:
        load_program(path, target=SM86).check()
    return caught.value.message, caught.value.hint or ""


@pytest.mark.parametrize("body, unknown, meant", [
    ("(nat-ad 1 2)", "nat-ad", "did you mean nat-add"),
    ("(nat-plus 1 2)", "nat-plus", "did you mean nat-add"),
    ("Natt", "Natt", "did you mean Nat?"),
    ("(bytes-length Byts)", "Byts", "did you mean Bytes"),
    ("((lambda unrestricted count : Nat . cout) 1)", "cout", "did you mean count?"),
    ("(let unrestricted total : Nat = 1 in totl)", "totl", "did you mean total?"),
])
def test_built_ins_primitives_and_local_names_are_suggested(tmp_path, body, unknown, meant):
    message, hint = refusal(tmp_path, f"def x : Nat = {body}")
    assert message == f"unknown name {unknown}"
    assert hint.startswith(meant)


def test_a_type_name_in_lower_case_suggests_the_type(tmp_path):
    message, hint = refusal(tmp_path, "def x : nat = 1")
    assert message == "unknown name nat" and hint.startswith("did you mean Nat")


def test_the_one_letter_completion_comes_first(tmp_path):
    message, hint = refusal(tmp_path, "def x : Nat = (naturalAd 1 2)", "import Std.Natural\n")
    assert hint.startswith("did you mean naturalAdd or naturalAnd")
    assert closest("naturalAd", ["naturalOr", "naturalAnd", "naturalAdd"]) == \
        ["naturalAdd", "naturalAnd", "naturalOr"]


def test_a_name_near_nothing_gets_no_suggestion():
    assert closest("qqqqqqqq", ["Nat", "nat-add", "size"]) == []


def test_a_field_read_as_a_function_says_fields_are_read_with_eliminate(tmp_path):
    message, hint = refusal(tmp_path, "family Pt : Type 0\nconstructor PtMake\n"
                                      "field unrestricted ptX : Nat\nfield unrestricted ptY : Nat\n"
                                      "end-family\n"
                                      "def p : Nat = (ptX (record Pt (ptX = 1) (ptY = 2)))")
    assert message == "unknown name ptX: it is a field, not a definition"
    assert "(eliminate Pt motive value (branch PtMake ptX ptY . ptX))" in hint


def test_a_record_field_of_a_family_without_fields_says_so(tmp_path):
    message, hint = refusal(tmp_path, "family Color : Type 0\nconstructor ColorRed\nend-family\n"
                                      "def s : (family Color) = (record Color (count = 1))")
    assert message == "Color has no field count"
    assert hint.startswith("its constructor ColorRed has no fields")
    assert "its fields: " not in hint


def test_a_motive_returning_a_function_is_worded_by_its_result_type(tmp_path):
    message, _ = refusal(tmp_path, "family Color : Type 0\nconstructor ColorRed\nend-family\n"
                                   "def c : (family Color) = (constructor Color ColorRed)\n"
                                   "def x : Nat = (eliminate Color (lambda unrestricted s : "
                                   "(family Color) . (lambda unrestricted t : Nat . Nat)) c "
                                   "(branch ColorRed . 0))")
    assert "must return a type (a value of type Type n), but it returns a function (of type " \
           "(pi unrestricted t : Nat . Type 0))" in message


def test_a_fixed_limit_does_not_send_the_user_to_the_compiler_source(tmp_path):
    message, hint = refusal(tmp_path, "def big : Nat = (nat-eliminate (lambda unrestricted c : "
                                      "Nat . Nat) 0 (lambda unrestricted k : Nat . (lambda "
                                      "unrestricted b : Nat . (nat-add b 1))) 2000000)\n"
                                      "def y : (equal Nat big 0) = (refl Nat 0)")
    assert "nat-eliminate runs 2,000,000 iterations" in message
    assert "limits.py" not in hint and "no option raises this limit" in hint


EVAL_PLAN = ("module Ev\n\nfamily Shape : Type 0\nconstructor ShapeOne\nfield unrestricted "
             "count : Nat\nend-family\ndef size : Nat = 1\n")


def evaluate(tmp_path, name):
    path = tmp_path / "Ev.bob"
    path.write_text(EVAL_PLAN, encoding="utf-8")
    return subprocess.run([sys.executable, "-m", "bobc", "eval", str(path), name],
                          capture_output=True, text=True, timeout=120)


def test_eval_of_an_unknown_name_suggests_a_definition(tmp_path):
    done = evaluate(tmp_path, "siz")
    assert done.returncode != 0 and "Traceback" not in done.stderr
    assert "no definition siz in Ev or its imports" in done.stderr
    assert "hint: did you mean size?" in done.stderr


def test_eval_of_a_family_says_it_is_a_family(tmp_path):
    done = evaluate(tmp_path, "Shape")
    assert done.returncode != 0 and "Traceback" not in done.stderr
    assert "error: Shape is a family, not a definition" in done.stderr
