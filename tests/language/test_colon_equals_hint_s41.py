"""`:=` where the language writes '=' (probe s41 messages6 "Found and left", messages7): the
definition `def NAME : TYPE = VALUE` (docs/language.md) and `(let m x = e in body)` take one '='.
Before, `def a : Nat := 1` said only "unexpected ':': expected '='" and `def a := 1` asked for a
type at the '=', with no hint.  Places counted by hand (line 1 is the module line)."""
import pytest

from bobc.language.parse import ParseError, parse_module

HINT = ("':=' is not this language's: a definition is `def NAME : TYPE = VALUE` (or `def NAME = VALUE`), a "
        "local one `(let m NAME = VALUE in BODY)`; write '=' alone")


@pytest.mark.parametrize("line, column, token", [
    ("def a : Nat := 1", 13, ":"),                               # the second ':' is the 13th character
    ("def a := 1", 8, "="),                                      # ':' at 7, a type expected at the '=' (8)
    ("def a : Nat = (let unrestricted x := 1 in x)", 36, "="),   # ':' at 35
])
def test_colon_equals_is_told_to_be_an_equals_sign(line, column, token):
    with pytest.raises(ParseError) as caught:
        parse_module(f"module T\n\n{line}\n", "T.bob")
    error = caught.value
    assert (error.span.line, error.span.column) == (3, column)
    assert error.message.startswith(f"unexpected '{token}'")
    assert error.hint == HINT


def test_a_plain_colon_mistake_keeps_its_own_words():
    """`def a : : Nat = 1`: a ':' not followed by '=' gets no such hint."""
    with pytest.raises(ParseError) as caught:
        parse_module("module T\n\ndef a : : Nat = 1\n", "T.bob")
    assert caught.value.hint != HINT
