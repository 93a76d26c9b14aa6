"""Three slips a user types get a hint saying what was read and what to write (probe s46 plantexts2
finding 8).  docs/language.md: a name is ASCII letters, digits, `_` and `'` "with single `-` between
such runs" (so it never ends with `-`); a byte string is `b"..."`, a token of its own; `(e)` is `e`
(so `()` holds no expression).  Before, each got "unexpected ..." and the expected-token list alone.
Places counted by hand (line 1 is the module line; "def r : Bytes = (f" is 18 characters)."""
import pytest

from bobc.language.parse import ParseError, parse_module


def _refusal(line: str) -> ParseError:
    with pytest.raises(ParseError) as caught:
        parse_module(f"module T\ndef f = (lambda unrestricted x : Bytes . x)\n{line}\n", "T.bob")
    return caught.value


def test_a_name_glued_to_a_byte_string_s46():
    error = _refusal('def r : Bytes = (fb"x")')
    assert (error.span.line, error.span.column) == (3, 20)          # the '"' after "fb"
    assert error.hint is not None and 'name fb' in error.hint and 'f b"x"' in error.hint, error.hint


def test_a_name_ending_in_a_hyphen_s46():
    error = _refusal("def a- : Nat = 1")
    assert (error.span.line, error.span.column) == (3, 6)
    assert error.hint is not None and "does not end with '-'" in error.hint, error.hint


def test_an_empty_form_s46():
    error = _refusal("def r : Nat = ()")
    assert (error.span.line, error.span.column) == (3, 16)          # the ')' of "()"
    assert error.hint is not None and "`()` holds no expression" in error.hint, error.hint


def test_an_unclosed_byte_string_keeps_its_own_words_s46():
    error = _refusal('def r : Bytes = b"abc')
    assert error.message.startswith("this byte string is not closed")
