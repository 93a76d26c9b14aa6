"""A new user's slips in a plan get a hint that names the fix (probe messages6 s41): a misspelt
top-level keyword (`deff`, `famly`, `impot`, `Def`), a misspelt form head (`(lamda ...)`,
`(elimnate ...)`), a ')' that closes nothing, a declaration without `def`.  Before, these said
only "unexpected 'deff': expected one of 'def', ..." (no hint), "unexpected ':'" inside the
lambda, or -- for `7)` -- a hint to write an application in parentheses.

Every place is counted by hand from the text written (line 1 is the module line)."""
import pytest

from bobc.language.parse import ParseError, parse_module
from bobc.errors import BobcError


def _refusal(text: str) -> BobcError:
    with pytest.raises(ParseError) as caught:
        parse_module(text, "T.bob")
    return caught.value


@pytest.mark.parametrize("line, keyword, hint", [
    ("deff b : Nat = 2", "deff", "did you mean `def`?"),
    ("famly F : Type", "famly", "did you mean `family`?"),
    ("Def b : Nat = 2", "Def", "keywords are lower case: write `def`"),
])
def test_a_misspelt_keyword_at_a_lines_start(line, keyword, hint):
    error = _refusal(f"module T\ndef a : Nat = 1\n{line}\n")
    assert (error.span.line, error.span.column) == (3, 1)
    assert error.message.startswith(f"unexpected '{keyword}'")
    assert error.hint == hint


def test_a_misspelt_import():
    error = _refusal("module T\nimpot Std.Natural\n")
    assert (error.span.line, error.span.column) == (2, 1)
    assert error.hint == "did you mean `import`?"


def test_a_declaration_without_def():
    error = _refusal("module T\ndef a : Nat = 1\nb : Nat = 2\n")
    assert (error.span.line, error.span.column) == (3, 1)
    assert error.hint.startswith("a declaration at the start of a line begins with a keyword: `def b : type = value`")


def test_a_misspelt_lambda_names_the_form():
    # "def f = (lamda unrestricted x " is 30 characters: the ':' the parser stops at is column 31
    error = _refusal("module T\ndef f = (lamda unrestricted x : Nat . x)\n")
    assert (error.span.line, error.span.column) == (2, 31)
    assert error.hint == ("lamda is not a form of the language; did you mean lambda? "
                          "(lambda multiplicity name : type . body)")


@pytest.mark.parametrize("value, column", [("7)", 16), ("(naturalAdd 1 2))", 31)])
def test_a_parenthesis_that_closes_nothing(value, column):
    # "def a : Nat = " is 14 characters; the stray ')' is the value's last character
    error = _refusal(f"module T\ndef a : Nat = {value}\ndef b : Nat = 1\n")
    assert (error.span.line, error.span.column) == (2, column)
    assert error.hint.startswith("this ')' closes no '('")


def test_a_misspelt_eliminate_is_named_by_the_resolver(tmp_path):
    import subprocess
    import sys
    from pathlib import Path

    (tmp_path / "T.bob").write_text("module T\ndef a : Nat = (elimnate Nat x)\n")
    done = subprocess.run([sys.executable, "-m", "bobc", "check", "T.bob"], cwd=tmp_path, capture_output=True,
                          text=True, env={"PYTHONPATH": str(Path(__file__).resolve().parents[2] / "compiler"),
                                          "PATH": "/usr/bin:/bin"})
    # "def a : Nat = (" is 15 characters: elimnate begins at column 16
    assert "T.bob:2:16: error: unknown name elimnate" in done.stderr
    assert "hint: elimnate is not a form of the language; did you mean eliminate?" in done.stderr


@pytest.mark.parametrize("text, line, column, before", [
    # "family Pair : " is 14 characters: Type at column 15; the parser stops at the next line's constructor
    ("module T\nfamily Pair : Type\n  constructor MkPair\nend-family\n", 2, 15, "constructor"),
    ("module T\ndef T : Type = Nat\n", 2, 9, "="),                          # "def T : " is 8 characters
    ("module T\ndef f = (lambda unrestricted x : Type . x)\n", 2, 34, "."),   # 33 characters before Type
])
def test_type_without_its_level(text, line, column, before):
    error = _refusal(text)
    assert (error.span.line, error.span.column) == (line, column)
    assert error.message == f"'Type' needs its universe level, a natural number, before '{before}'"
    assert error.hint.startswith("write `Type 0` for the types of values")
