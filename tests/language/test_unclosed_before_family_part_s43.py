"""A '(' left open on a family's line, met by the `field` or `constructor` line after it, is refused
at that '(' as not closed -- as one met by the next `def` or `family` is -- not at the `field`
with "unexpected 'field'" and the hint "family is written (family Name argument ...)" (probe s43
fuzz finding F2: one ')' deleted from specs/Platform/Linux/Nvidia/ResourcePlan.bob).

The expected places come from the text itself: the grammar (grammar.lark) has `field` and a
line-initial `constructor` only as parts of a family declaration, never inside a parenthesised
expression, so the innermost '(' still open when one of them is met is the one that lacks its ')'.
"""
from __future__ import annotations

import pytest

from bobc.language.parse import ParseError, parse_module

FAMILY = ("module M\n"
          "family F : Type 0\n"
          "constructor FValue\n"
          "field unrestricted a : (family G\n"           # line 4: the '(' at column 24 is not closed
          "{next}\n"
          "end-family\n")


def _refusal(text: str) -> ParseError:
    with pytest.raises(ParseError) as caught:
        parse_module(text, "M.bob")
    return caught.value


@pytest.mark.parametrize("next_line", ["field unrestricted b : Nat", "constructor FOther"])
def test_an_open_parenthesis_before_a_family_part_is_named(next_line):
    error = _refusal(FAMILY.format(next=next_line))
    keyword = next_line.split()[0]
    assert (error.span.line, error.span.column) == (4, 24)
    assert error.message == f"this '(' is not closed: '{keyword}' at 5:1 is inside it"
    assert "family is written" not in (error.hint or "")


def test_a_constructor_form_inside_an_expression_is_not_taken_for_a_declaration():
    """`constructor` is also a form's head, after '(' -- on its own line too; such a text parses."""
    module = parse_module("module M\nfamily F : Type 0\nconstructor FValue\nend-family\n"
                          "def x : (family F) = (\n  constructor F FValue)\n", "M.bob")
    assert [d.name for d in module.declarations] == ["F", "x"]


def test_a_keyword_after_an_open_parenthesis_mid_line_keeps_the_parsers_words():
    """`field` after code on its line is no declaration's start: the parser's own refusal."""
    error = _refusal("module M\nfamily F : Type 0\nconstructor FValue\n"
                     "field unrestricted a : (family G field\nend-family\n")
    assert error.message.startswith("'field' is a keyword, not a name")



@pytest.mark.parametrize("line, keyword", [("field unrestricted a : Nat", "field"),
                                           ("def y : Nat = 1", "def"),
                                           ("family G : Type 0", "family")])
def test_a_declaration_line_inside_a_form_whose_parentheses_close_is_named_so(line, keyword):
    """A declaration's line pasted inside an expression whose '(' all close later (the fuzzer
    duplicated a family's field line into an eliminate): no '(' lacks its ')', so the refusal is
    at that line and names the '(' around it and where it closes (probe s43 fuzz F8), not "this
    '(' is not closed".  The places are counted in the text below: the '(' after `= ` on line 6
    (column 15), its ')' on line 8 after `  b")" 1` (column 9: a ')' in a byte string or a
    comment closes nothing)."""
    error = _refusal("module M\nfamily F : Type 0\nconstructor FValue\nfield unrestricted a : Nat\n"
                     f"end-family\ndef x : Nat = (f -- (\n{line}\n  b\")\" 1)\n")
    assert (error.span.line, error.span.column) == (7, 1)
    assert error.message == (f"'{keyword}' is a declaration's keyword, here inside the '(' at 6:15, "
                             f"which closes only at 8:9")
    assert "not closed" not in error.message
