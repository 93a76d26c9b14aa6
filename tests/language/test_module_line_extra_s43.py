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
