"""The u32 halves of a bank 0 word at their edge bits, and which side a one-sided fact is on
(session 43 mutants9 of bobc.nvidia.golden: the high half read from bit 31, the low half as bits
0..30, and "only in a"/"only in b" swapped each survived test_bank0_halves and the alignment tests).

Hand arithmetic: a little-endian 8-byte word's low u32 is bits 0..31 and its high u32 bits 32..63,
so a change in bit 31 alone is in the low half and one in bit 32 alone in the high half.  A fact
absent from a (its value None) is "only in b" (a launch kind shows its value in hex)."""
from __future__ import annotations

from bobc.nvidia.golden import Difference, _half_of_argument

TWO = "argument 2: M, N (u32) (scalar)"


def test_bit_31_is_the_low_half_and_bit_32_the_high():
    assert _half_of_argument(TWO, 0, 1 << 31) == f"{TWO}: its low u32"
    assert _half_of_argument(TWO, 0, 1 << 32) == f"{TWO}: its high u32"
    assert _half_of_argument(TWO, 0, 3 << 31) == f"{TWO}: both u32 halves"


def test_a_fact_on_one_side_names_that_side():
    assert Difference("launch[+3]", "launch", "", None, 5, "").text() == "launch[+3]: only in b: 0x5"
    assert Difference("launch[3]", "launch", "", 5, None, "").text() == "launch[3]: only in a: 0x5"
