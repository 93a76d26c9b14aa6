"""Three more slips get a message naming what was read, at its place, with what to write (session 47,
helper leftovers9; probe s46 plantexts2 findings 8 and 10).  Before: a Ctrl-Z at a file's end was
"unexpected character '\\x1a'" with no hint; `B"x"` got 'text is written as a byte string: b"..."', not
that the B is upper case; `(nat-add 1)2` got the expected-token list alone.  docs/language.md: a byte
string is `b"..."`; `(f a b)` is application; a definition's value is one expression.  Places are hand
counts (line 1 is the module line; "def r : Bytes = " is 16 characters, "def r : Nat = (nat-add 1)" 25)."""
import pytest

from bobc.language.parse import ParseError, parse_module


def _refusal(text: str) -> ParseError:
    with pytest.raises(ParseError) as caught:
        parse_module(text, "T.bob")
    return caught.value


def _parses(text: str) -> None:
    parse_module(text, "T.bob")


@pytest.mark.parametrize("ending, line, column", [("def r : Nat = 1\n\x1a", 3, 1),
                                                  ("def r : Nat = 1\x1a\n", 2, 16),
                                                  ("def r : Nat = 1\n\x1a\x1a\n", 3, 1)])
def test_a_ctrl_z_at_the_end_of_the_file_s47(ending, line, column):
    error = _refusal("module T\n" + ending)
    assert (error.span.line, error.span.column) == (line, column)
    assert "Ctrl-Z" in error.message and "U+001A" in error.message and "\x1a" not in error.message
    assert error.hint is not None and error.hint.startswith("delete it"), error.hint
    _parses("module T\n" + ending.replace("\x1a", ""))


@pytest.mark.parametrize("char, name", [("\x07", "U+0007, Ctrl-G"), ("\x1b", "U+001B, Ctrl-["),
                                        ("\x1a", "U+001A, Ctrl-Z"), ("\x7f", "U+007F")])
def test_a_control_character_before_more_code_s47(char, name):
    error = _refusal(f"module T\ndef r : Nat = 1{char}\ndef s : Nat = 2\n")
    assert (error.span.line, error.span.column) == (2, 16)
    assert f"a control character ({name})" in error.message and char not in error.message, error.message
    assert error.hint is not None and error.hint.startswith("delete it") and f"\\x{ord(char):02x}" in error.hint


@pytest.mark.parametrize("value, written", [('B"x"', 'b"x"'), ('B"a\\"b"', 'b"a\\"b"'), ('(f B"x")', 'b"x"')])
def test_an_upper_case_byte_string_prefix_s47(value, written):
    text = f"module T\ndef f = (lambda unrestricted x : Bytes . x)\ndef r : Bytes = {value}\n"
    error = _refusal(text)
    column = 17 + value.index("B")
    assert (error.span.line, error.span.column, error.span.end_column) == (3, column, column + 2)
    assert "'B\"'" in error.message and "lower-case b" in error.message, error.message
    assert error.hint == f"write {written}", error.hint
    _parses(text.replace(value, value.replace('B"', 'b"')))


@pytest.mark.parametrize("value, second, column, written", [
    ("(nat-add 1)2", "2", 26, "((nat-add 1) 2)"),
    ("(nat-add 1) x", "x", 27, "((nat-add 1) x)"),
    ("(nat-add 1)(succ 2)", "(", 26, "((nat-add 1) (succ 2))")])
def test_a_second_expression_after_a_closed_form_s47(value, second, column, written):
    text = f"module T\ndef x : Nat = 4\ndef r : Nat = {value}\n"
    error = _refusal(text)
    assert (error.span.line, error.span.column) == (3, column)
    assert f"unexpected '{second}'" in error.message
    assert error.hint is not None and "ended at the ')' at 3:25" in error.hint, error.hint
    assert error.hint.endswith(f"write the application in parentheses: {written}"), error.hint
    _parses(text.replace(value, written))
