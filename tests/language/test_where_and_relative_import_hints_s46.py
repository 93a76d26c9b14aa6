"""Two forms of other languages that a user writes in a plan get a hint naming this language's form
(probe s46 plantexts2 findings 2 and 5).  docs/language.md defines no `where` clause (a local
definition is `(let m x = e in body)`, or a `def`) and no relative import (`import A.B.C` names the
module from the plan's root: "Search path").  Before, `def r : Nat = (nat-add y 1) where y = 3`
said only "unexpected 'where': expected one of 'def', 'family' or the end of the file" and
`import .X` "unexpected '.': expected a name", with no hint.  Places counted by hand (line 1 is the
module line)."""
import pytest

from bobc.language.parse import ParseError, parse_module


@pytest.mark.parametrize("text, line, column", [
    ("def r : Nat = (nat-add y 1) where y = 3\n", 3, 29),        # "where" is the 29th character
    ("def r : Nat = (nat-add y 1)\n  where\n    y = 3\n", 4, 3),
    ("def r : Nat = (nat-add y 1) where\n  y = 3\n", 3, 29),
])
def test_where_is_told_to_be_a_let_s46(text, line, column):
    with pytest.raises(ParseError) as caught:
        parse_module(f"module T\n\n{text}", "T.bob")
    error = caught.value
    assert (error.span.line, error.span.column) == (line, column)
    assert error.message.startswith("unexpected 'where'")
    assert "no `where`" in error.hint
    assert "(let unrestricted NAME = VALUE in BODY)" in error.hint


@pytest.mark.parametrize("text, column, written", [
    ("import .X\n", 8, "import A.X"),            # the '.' is the 8th character
    ("import ..Std.List\n", 8, "import Std.List"),
])
def test_relative_import_is_told_to_name_the_whole_path_s46(text, column, written):
    with pytest.raises(ParseError) as caught:
        parse_module(f"module A.T\n{text}", "A/T.bob")
    error = caught.value
    assert (error.span.line, error.span.column) == (2, column)
    assert "no relative imports" in error.hint
    assert written in error.hint, error.hint


def test_a_name_called_where_is_still_a_name_s46():
    """`where` is no keyword: a definition may take it as its name."""
    parse_module("module T\n\ndef where : Nat = 3\ndef r : Nat = where\n", "T.bob")
