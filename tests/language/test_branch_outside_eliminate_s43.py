"""A `(branch C x . body)` outside an eliminate (the fuzzer deleted `eliminate`, leaving an
application) is refused with a hint that a branch stands only inside an eliminate, not with
"branch is written (branch Constructor name ... . body)" -- the shape the text already has
(probe s43 fuzz finding F9).

Independent reason: grammar.lark has `branch` only among an eliminate's parts
(`"eliminate" NAME expr expr branch*`); elsewhere `branch` is a name and the '.' unexpected."""
from __future__ import annotations

import pytest

from bobc.language.parse import ParseError, parse_module


def _refusal(text: str) -> ParseError:
    with pytest.raises(ParseError) as caught:
        parse_module(text, "M.bob")
    return caught.value


@pytest.mark.parametrize("text, place", [
    ("module M\ndef x = (F (lambda unrestricted c : Nat . Nat) v\n  (branch C bytes . bytes))\n", (3, 19)),
    ("module M\ndef x = (branch C bytes . bytes)\n", (2, 25)),
])
def test_a_branch_outside_an_eliminate_is_said_so(text, place):
    error = _refusal(text)
    assert (error.span.line, error.span.column) == place
    assert error.hint.startswith("a branch stands only inside an eliminate: (eliminate Family")


def test_a_malformed_branch_inside_an_eliminate_keeps_its_shape_hint():
    error = _refusal("module M\ndef x = (eliminate F (lambda unrestricted c : Nat . Nat) v\n  (branch C b b))\n")
    assert error.hint == "branch is written (branch Constructor name ... . body)"
