"""Something after the dotted name on a `module` or `import` line (`import Std.Natural Std.Word`,
`module A.M foo`) is refused with a hint about that line (probe s43 fuzz finding F3), not the
definition hint "to apply Natural, write the application in parentheses", which read the path's
last part as a function although no definition is there.

What is expected comes from the grammar (grammar.lark): `module` and `import` take one dotted
module name each, so the word after it on that line begins nothing the line can hold."""
from __future__ import annotations

import pytest

from bobc.language.parse import ParseError, parse_module


def _refusal(text: str) -> ParseError:
    with pytest.raises(ParseError) as caught:
        parse_module(text, "M.bob")
    return caught.value


@pytest.mark.parametrize("text, place, keyword", [
    ("module M foo\n", (1, 10), "module"),
    ("module A.M 1\n", (1, 12), "module"),
    ("\ufeffmodule A.M (x)\n", (1, 12), "module"),
    ("module M\nimport Std.Natural Std.Word\n", (2, 20), "import"),
    ("module M\nimport Std.Natural (foo)\n", (2, 20), "import"),
])
def test_a_word_after_a_module_path_is_said_as_such(text, place, keyword):
    error = _refusal(text)
    assert (error.span.line, error.span.column) == place
    assert "to apply" not in (error.hint or "")
    assert error.hint.startswith("an import line names one module" if keyword == "import"
                                 else "the module line holds only the module's dotted name")


def test_a_definition_keeps_its_application_hint():
    error = _refusal("module M\ndef x : Nat = f y\n")
    assert "to apply f" in error.hint


@pytest.mark.parametrize("text, place, after_definitions", [
    ("module M\nStd.Natural\n", (2, 1), False),
    ("module M\nimport Std.Word\n  Std.Natural -- the naturals\n", (3, 3), False),
    ("module M\ndef x : Nat = 1\nStd.Natural\n", (3, 1), True),
])
def test_a_module_path_without_its_import_is_said_as_such(text, place, after_definitions):
    """A dotted module path alone on its line is an import with its keyword left out (grammar.lark:
    `import_line: "import" module_path`, imports before any declaration), not a definition's
    name: the hint was `def Std : type = value` (probe s43 fuzz finding F6)."""
    error = _refusal(text)
    assert (error.span.line, error.span.column) == place
    assert error.hint.startswith("a module path alone on its line: an import is written `import Std.Natural`")
    assert ("right after the module line" in error.hint) == after_definitions
    assert "def Std" not in error.hint


def test_a_name_alone_on_its_line_keeps_the_declaration_hint():
    error = _refusal("module M\nfoo\n")
    assert "`def foo : type = value`" in error.hint


def test_a_word_glued_to_a_module_path_gets_the_module_line_hint():
    """`module A.B((.C` (the fuzzer's parentheses right after the path): the same hint as with a
    space between, not "to apply B" (probe s43 fuzz finding F3)."""
    error = _refusal("module A.B((.C\n")
    assert (error.span.line, error.span.column) == (1, 11)
    assert error.hint.startswith("the module line holds only the module's dotted name")


def test_a_module_path_without_its_module_keyword_is_said_as_such():
    """A file that begins with a dotted path (`Model.Config`, its `module` deleted) lacks the
    keyword: it is no misspelt `module`, though difflib finds 'model' close to 'module'
    (probe s43 fuzz finding F10: "did you mean `module` (keywords are lower case)?")."""
    error = _refusal(" Model.Config\nimport Std.Natural\n")
    assert (error.span.line, error.span.column) == (1, 2)
    assert error.message.startswith("this file has no module line: it begins with the module path "
                                    "'Model.Config' without the keyword `module`")
    assert "keywords are lower case" not in error.hint
