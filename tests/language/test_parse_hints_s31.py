"""Hints for three slips the parser and `bobc check` met silently or with no word of the cause
(probe s31 stdlib finding 8): `--` glued to a name begins a comment; `match` (or `case`, `if`)
is not a form; the same import written twice."""
from __future__ import annotations

import pytest

from bobc.cli import main
from bobc.errors import BobcError
from bobc.language.parse import parse_module


def refusal(text: str) -> BobcError:
    with pytest.raises(BobcError) as caught:
        parse_module("module M\n\n" + text, "M.bob")
    return caught.value


def test_a_double_dash_inside_a_name_is_said_to_begin_a_comment():
    error = refusal("def a--b : Nat = 1\n")
    assert error.message.startswith("the file ends too early")
    assert error.hint.startswith("the `--` at 3:6 begins a comment, to the end of the line, so "
                                 "`a--b` was read as `a` and a comment")
    # the next declaration follows: the parser stops at its `def`, the hint is the same
    error = refusal("def a--b : Nat = 1\ndef c : Nat = 2\n")
    assert error.hint.startswith("the `--` at 3:6 begins a comment")


def test_a_double_dash_in_a_byte_string_or_an_earlier_comment_is_not_blamed():
    error = refusal('def a : Bytes = b"x--y" (\n')
    assert "begins a comment" not in (error.hint or "")
    error = refusal("def a : Nat = -- note: x--y\n")
    assert "begins a comment" not in (error.hint or "")


@pytest.mark.parametrize("form", ["match", "case", "if"])
def test_a_form_of_another_language_is_said_not_to_be_one(form):
    error = refusal(f"def f : Nat = ({form} 3 (zero . 1))\n")
    assert error.hint.startswith(f"{form} is not a form of the language: ")
    assert "eliminate" in error.hint


def test_an_import_written_twice_is_warned(tmp_path, capsys):
    plan = tmp_path / "Twice.bob"
    plan.write_text("module Twice\n\nimport Std.Natural\nimport Std.Natural\n\ndef x : Nat = 1\n")
    assert main(["check", str(plan)]) == 0
    err = capsys.readouterr().err
    assert "Twice.bob:4:8: warning: Twice imports Std.Natural twice (first at line 3); this " \
           "import adds nothing" in err
    plan.write_text("module Twice\n\nimport Std.Natural\nimport Std.List\n\ndef x : Nat = 1\n")
    assert main(["check", str(plan)]) == 0
    assert "warning" not in capsys.readouterr().err


# probe s31 (probe-today) finding 9: the hints appeared only for some error shapes


@pytest.mark.parametrize("body", ["(if c a b)", "(case 1 2 3)", "(match)", "( if\n  1 2 3)"])
def test_a_form_of_another_language_that_parses_gets_the_hint_from_the_resolver(tmp_path, capsys,
                                                                                  body):
    form = body.strip("( \n").split()[0].rstrip(")")
    plan = tmp_path / "Ab.bob"
    plan.write_text(f"module Ab\n\ndef ab : Nat = {body}\n")
    assert main(["check", str(plan)]) == 1
    err = capsys.readouterr().err
    assert f"error: unknown name {form}\n" in err
    assert f"hint: {form} is not a form of the language: " in err
    assert "sees its own and its imports' names" not in err


def test_a_name_if_that_heads_no_form_keeps_the_plain_hint(tmp_path, capsys):
    plan = tmp_path / "Ab.bob"
    plan.write_text("module Ab\n\ndef ab : Nat = (nat-add if 2)\n")
    assert main(["check", str(plan)]) == 1
    err = capsys.readouterr().err
    assert "error: unknown name if" in err and "not a form" not in err
    assert "sees its own and its imports' names" in err


@pytest.mark.parametrize("body, where, glued", [
    ("(nat-add 1--2)", "3:26", "1--2"),
    ("(let unrestricted x--y = 1 in x)", "3:35", "x--y"),
    ("(nat-add 1\n  x--y)", "4:4", "x--y"),
    ("(nat-add 1--2)\ndef c : Nat = 3", "3:26", "1--2"),        # stopped at the next def
])
def test_a_double_dash_glued_inside_an_open_form_is_named(body, where, glued):
    error = refusal(f"def ab : Nat = {body}\n")
    assert error.message.startswith("this '(' is not closed")
    assert error.hint.startswith(f"the `--` at {where} begins a comment, to the end of the line, "
                                 f"so `{glued}` was read as `{glued[0]}` and a comment")
    assert ("subtract with (nat-subtract a b)" in error.hint) == glued[0].isdigit()


def test_an_open_form_with_a_real_comment_keeps_the_plain_hint():
    error = refusal("def ab : Nat = (nat-add 1 -- x--y\n  2\n")
    assert error.message.startswith("this '(' is not closed")
    assert error.hint == "close every '(' with ')' before the next declaration"


def test_an_import_written_three_times_is_warned_once(tmp_path, capsys):
    # probe s31 (probe-today) minor: warned twice, each saying "twice"
    plan = tmp_path / "Thrice.bob"
    plan.write_text("module Thrice\n\nimport Std.Natural\nimport Std.Natural\nimport Std.List\n"
                    "import Std.Natural\n\ndef x : Nat = 1\n")
    assert main(["check", str(plan)]) == 0
    err = capsys.readouterr().err
    assert err.count("warning:") == 1
    assert "Thrice.bob:4:8: warning: Thrice imports Std.Natural 3 times (first at line 3, again " \
           "at lines 4 and 6); the imports after the first add nothing" in err
    assert "twice" not in err
