"""Probe s38 texts2 finding 5: "unknown escape '\\<c>'" wrote the character after the backslash
as itself, so an ESC (a terminal escape sequence), a tab or a right-to-left override reached the
terminal in a one-line message (the excerpt under it shows them as '?').  An invisible or
controlling character is now named by its code point; a visible one is quoted as before."""
from __future__ import annotations

import pytest

from bobc.language.parse import ParseError, parse_module


@pytest.mark.parametrize("after, said", [
    ("\x1b", "'\\' before U+001B (a control character)"),
    ("\t", "'\\' before U+0009 (tab)"),
    ("\u202e", "'\\' before U+202E (right-to-left override)"),
    ("\u00a0", "'\\' before U+00A0 (no-break space)"),
    ("q", "'\\q'"),
    ("é", "'\\é'"),
])
def test_an_unknown_escape_is_named_without_sending_its_character(after, said):
    text = f'module T.A\ndef a : Bytes = b"ab\\{after}c"\n'
    with pytest.raises(ParseError) as raised:
        parse_module(text, "T/A.bob")
    message = str(raised.value)
    assert f"unknown escape {said} in a byte string" in message, message
    assert message.isprintable(), ascii(message)
    assert (raised.value.span.line, raised.value.span.column) == (2, 21)     # the backslash
