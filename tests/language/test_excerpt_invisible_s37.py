"""A source excerpt shows the characters a terminal draws in no cell, reorders the line by or
breaks it at -- zero-width spaces, bidirectional overrides, a byte order mark inside a line,
U+2028, C1 controls -- as '?', one cell each, as it shows the C0 controls, so the caret stands
under the column the message names (probe s37 sourcetext finding 5: three zero-width spaces
before an unknown name put the caret three cells right of it; a right-to-left override in a
string reversed the rest of the shown line)."""
from __future__ import annotations

import unicodedata

import pytest

from bobc.errors import BobcError, excerpt
from bobc.language import load_program
from bobc.targets import SM86

INVISIBLE = ["\u200b", "\u200d", "\u202e", "\u2066", "\ufeff", "\u2028", "\u2029", "\u0085", "\u00ad"]


@pytest.mark.parametrize("character", INVISIBLE)
def test_an_invisible_character_before_the_error_keeps_the_caret_under_it(tmp_path, character):
    (tmp_path / "T").mkdir()
    plan = tmp_path / "T" / "A.bob"
    plan.write_text(f'module T.A\ndef a : Bytes = b"{character * 3}x" def b : Nat = zz\n', encoding="utf-8")
    with pytest.raises(BobcError) as caught:
        load_program(plan, target=SM86)
    span = caught.value.span
    assert (span.line, span.column) == (2, 39)          # characters: 18 before the string's body, 3, 'x" def b : Nat = '
    shown, caret = span.source_excerpt().splitlines()[:2]
    # every character shown takes one terminal cell (none is a format, control or separator character)
    assert all(unicodedata.category(c)[0] not in "CZ" or c == " " for c in shown), ascii(shown)
    assert caret.index("^") == shown.index("zz")


def test_a_tab_and_wide_characters_are_kept():
    shown, caret = excerpt("\t日本 zz", 5, 2).splitlines()
    assert shown == "  \t日本 zz" and caret == "  \t     ^^"
