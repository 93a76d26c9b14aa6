"""Probe s38 texts2 finding 7: `-1` was refused as "unexpected character '-'" with no hint, when every
other malformed numeral (1.5, 1_000, 0b101) gets one: the language has naturals only."""
from __future__ import annotations

import pytest

from bobc.language.parse import ParseError, parse_module


def test_a_negative_literal_is_refused_at_its_minus_with_what_to_write():
    with pytest.raises(ParseError) as raised:
        parse_module("module T.A\ndef a : Nat = (nat-add 2 -1)\n", "T/A.bob")
    assert (raised.value.span.line, raised.value.span.column) == (2, 26)
    assert "natural numbers only" in raised.value.hint and "nat-subtract" in raised.value.hint
