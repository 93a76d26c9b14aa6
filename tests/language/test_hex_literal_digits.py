"""A hex literal's digits are counted without its 0x (probe s31 limits finding 7): 0x and 78,000
digits is within the limit of 78,000 digits docs/limits.md gives, and one more digit is refused
as 78,001 digits, not 78,003."""
from __future__ import annotations

import pytest

from bobc.errors import BobcError
from bobc.language import limits
from bobc.language.parse import parse_module


def test_a_hex_literal_of_exactly_the_limit_of_digits_is_read():
    text = "module H\ndef x : Nat = 0x" + "0" * (limits.NATURAL_LITERAL_DIGITS - 1) + "1\n"
    parse_module(text, "H.bob")


def test_a_hex_literal_past_the_limit_counts_its_digits_only():
    text = "module H\ndef x : Nat = 0x" + "0" * limits.NATURAL_LITERAL_DIGITS + "1\n"
    with pytest.raises(BobcError) as caught:
        parse_module(text, "H.bob")
    assert caught.value.message.startswith("a hexadecimal natural number literal of 78,001 digits: more "
                                           "than the limit of 78,000"), caught.value.message


def test_a_decimal_literal_is_counted_as_before():
    parse_module("module D\ndef x : Nat = " + "0" * limits.NATURAL_LITERAL_DIGITS + "\n", "D.bob")
    with pytest.raises(BobcError) as caught:
        parse_module("module D\ndef x : Nat = " + "0" * (limits.NATURAL_LITERAL_DIGITS + 1) + "\n", "D.bob")
    assert caught.value.message.startswith("a natural number literal of 78,001 digits")
