"""The checks behind parser/failure's number_*, unclosed_* and *_string cases read the
source only after a parse fails or around a natural: what was valid stays valid."""
from __future__ import annotations

from bobc.language.parse import parse_module


def test_a_dot_right_after_a_natural_is_still_the_lambdas_dot():
    module = parse_module("module M\n"
                          "def f = (lambda unrestricted A : Type 0. (lambda unrestricted x : A.x))\n"
                          "def g = (lambda unrestricted n : Nat . 1)\n"
                          "def h : Nat = (nat-add 0x1f 12)\n", "M.bob")
    assert [d.name for d in module.declarations] == ["f", "g", "h"]


def test_parentheses_in_comments_and_byte_strings_do_not_count_as_unclosed():
    from bobc.language.parse import _unclosed_parentheses
    text = 'def a = (f b"(" -- (\n  (g 1))\ndef b = (h\n'
    assert _unclosed_parentheses(text, len(text)) == [text.index("(h")]
