"""A recursive field after a field that hides a parameter (probe s39 typerules finding 5).
`field A : Type 0` then `field t : (family L A)`: the A of t's type is the field, so t does not
repeat L's parameters, but the hint said "write (family L A)", what was written.  It now names
the field that hides the parameter."""
from __future__ import annotations

import pytest

from bobc.errors import BobcError
from bobc.language import load_program
from bobc.targets import SM86


def test_the_hint_names_the_field_hiding_the_parameter(tmp_path):
    path = tmp_path / "Hidden.bob"
    path.write_text("module Hidden\n\nfamily L (A : Type 0) : Type 1\nconstructor C\n"
                    "field unrestricted A : Type 0\nfield unrestricted t : (family L A)\n"
                    "end-family\n", encoding="utf-8")
    with pytest.raises(BobcError) as caught:
        load_program(path, target=SM86).check()
    error = caught.value
    assert "recursive field t of C must repeat L's parameters unchanged" in error.message
    assert (error.span.line, error.span.column) == (6, 20)
    assert error.hint.startswith(f"field A of C ({path}:5:20) hides the parameter A")
    assert "rename the field" in error.hint


def test_without_a_hidden_parameter_the_hint_is_the_parameters(tmp_path):
    path = tmp_path / "Swapped.bob"
    path.write_text("module Swapped\n\nfamily L (A : Type 0) (B : Type 0) : Type 0\nconstructor N\n"
                    "constructor C\nfield unrestricted t : (family L B A)\nend-family\n",
                    encoding="utf-8")
    with pytest.raises(BobcError) as caught:
        load_program(path, target=SM86).check()
    assert caught.value.hint == "write (family L A B)"
