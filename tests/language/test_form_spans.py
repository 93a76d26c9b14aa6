"""An error about a whole `eliminate`, `constructor` or `record` form underlines the form, not
its family or constructor name (probe s29 types finding 7: a type mismatch of an eliminate
underlined only the family name, which read as "the family name is wrong").  An error that is
about a name (an unknown family or constructor) still points at that name."""
from __future__ import annotations

import pytest

from bobc.errors import BobcError
from bobc.language import load_program
from bobc.targets import SM86

FAMILIES = ("family Color : Type 0\nconstructor ColorRed\nend-family\n"
            "family Pt : Type 0\nconstructor PtMake\nfield unrestricted ptX : Nat\nend-family\n"
            "def c : (family Color) = (constructor Color ColorRed)\n")


def refusal(tmp_path, line):
    path = tmp_path / "Spans.bob"
    path.write_text("module Spans\n\n" + FAMILIES + line + "\n", encoding="utf-8")
    with pytest.raises(BobcError) as caught:
        load_program(path, target=SM86).check()
    error = caught.value
    return error.message, (error.span.line, error.span.column,
                           getattr(error.span, "end_column", None)), line


def column_of(line, text):
    return line.index(text) + 1


def test_an_eliminate_of_the_wrong_type_underlines_the_whole_form(tmp_path):
    line = ("def y : Bytes = (bytes-append b\"\" (eliminate Color (lambda unrestricted s : "
            "(family Color) . Nat) c (branch ColorRed . 0)))")
    message, (_, column, end), line = refusal(tmp_path, line)
    assert "type mismatch" in message
    assert column == column_of(line, "(eliminate")
    assert end == len(line)          # through the eliminate's closing parenthesis


def test_a_constructor_and_a_record_of_the_wrong_family_underline_the_whole_form(tmp_path):
    line = "def s : (family Pt) = (constructor Color ColorRed)"
    message, (_, column, end), line = refusal(tmp_path, line)
    assert "type mismatch" in message
    assert (column, end) == (column_of(line, "(constructor"), len(line) + 1)
    line = "def s : (family Color) = (record Pt (ptX = 1))"
    message, (_, column, end), line = refusal(tmp_path, line)
    assert "type mismatch" in message
    assert (column, end) == (column_of(line, "(record"), len(line) + 1)


@pytest.mark.parametrize("line, name, wanted", [
    ("def y : Nat = (eliminate Colour (lambda unrestricted s : (family Color) . Nat) c "
     "(branch ColorRed . 0))", "Colour", "unknown family Colour"),
    ("def s : (family Color) = (constructor Color ColorBlue)", "ColorBlue",
     "family Color has no constructor ColorBlue"),
    ("def s : (family Color) = (constructor Colr ColorRed)", "Colr", "unknown family Colr"),
    ("def s : (family Pt) = (record Pnt (ptX = 1))", "Pnt", "unknown family Pnt"),
    ("def y : Nat = (eliminate Pt (lambda unrestricted s : (family Pt) . Nat) (record Pt "
     "(ptX = 1)))", "Pt (lambda", "eliminate Pt has no branch for PtMake"),
])
def test_an_error_about_a_name_points_at_the_name(tmp_path, line, name, wanted):
    message, (_, column, _), line = refusal(tmp_path, line)
    assert message.startswith(wanted)
    assert column == column_of(line, name)
