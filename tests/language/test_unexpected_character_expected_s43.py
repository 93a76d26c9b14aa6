"""An unexpected character's "expected ..." names what the parser could take there, as an
unexpected token's does (parse._acceptable), not the lexer's terminals for the state, which lark
merges over every context (probe s43 fuzz finding F7: `def x : Nat = 1é` listed '(', ')', '.',
'=', 'Type', 'constructor', 'def', 'end-family', 'family', 'field', 'in', ...).

The expected sets come from grammar.lark: `start: module_header import_line* declaration*` and
`definition: "def" NAME [":" expr] "=" expr` -- after a definition's whole value only the next
declaration or the file's end may come; inside an application `(f a ...)`, another argument
(an expression: '(', Type, a byte string, a name, a natural) or its ')'."""
from __future__ import annotations

import pytest

from bobc.language.parse import ParseError, parse_module


def _refusal(text: str) -> ParseError:
    with pytest.raises(ParseError) as caught:
        parse_module(text, "M.bob")
    return caught.value


@pytest.mark.parametrize("text, message", [
    ("module M\ndef x : Nat = 1\u00e9\n",
     "unexpected character 'é': expected one of 'def', 'family' or the end of the file"),
    ("module M\ndef x : Nat = (f 1 2)\u00e9\n",
     "unexpected character 'é': expected one of 'def', 'family' or the end of the file"),
    ("module M\ndef x : Nat = (f\u00e9 1)\n",
     "unexpected character 'é': expected one of '(', ')', 'Type', a byte string (b\"...\"), a name "
     "or a natural number"),
    ("module M\ndef x : Nat = 1 \"a\"\n",
     "unexpected character '\"': expected one of 'def', 'family' or the end of the file"),
])
def test_an_unexpected_character_names_what_could_come_there(text, message):
    assert _refusal(text).message == message
