"""Probe s38 texts2 finding 4: "the file ends too early" counted lines with str.splitlines, which
also ends a line at a form feed, U+0085, U+2028 (and 0x1c-0x1e): a form feed between declarations,
or one of those characters in a byte string or a comment, put the place a line late, with an
empty or missing excerpt.  Lines end at LF, CR LF and CR only (docs/language.md)."""
from __future__ import annotations

import pytest

from bobc.language.parse import ParseError, parse_module


@pytest.mark.parametrize("between", ["\f\n", 'def b : Bytes = b"x\x85y"\n', "-- a\u2028b\n",
                                     'def b : Bytes = b"x\u2029\x1cy"\n'])
def test_the_end_of_the_file_is_placed_after_the_last_lines_text(between):
    text = "module T.A\n" + between + "def a : Nat =\n"
    last = text.rstrip("\n").split("\n")
    with pytest.raises(ParseError) as raised:
        parse_module(text, "T/A.bob")
    span = raised.value.span
    assert "the file ends too early" in str(raised.value)
    assert (span.line, span.column) == (len(last), len(last[-1]) + 1) == (3, 14)
