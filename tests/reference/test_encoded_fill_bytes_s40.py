"""plan.host.encoded_fill's bytes at the edges the s39 tests left open (probe s40 mutants4): a
word32 fill of 0 (and of -0.0, which C's `v >= 0.0 && v == floor(v)` accepts: runtime_c/plan_fill.c
bobc_fill_bytes) is four zero bytes, not a refusal; a binary32 fill is the IEEE 754 binary32
pattern in little-endian byte order (docs/formats.md: every word little-endian), worked by hand:
1.5 = 0x3FC00000, -2.0 = 0xC0000000, 0.1 rounds to 0x3DCCCCCD."""
from __future__ import annotations

import pytest

from bobc.plan.host import encoded_fill


@pytest.mark.parametrize("v", [0.0, -0.0])
def test_a_word32_fill_of_zero_is_four_zero_bytes(v):
    assert encoded_fill("word32", v, 0) == b"\x00\x00\x00\x00"


def test_the_largest_word32_fill_is_all_ones():
    assert encoded_fill("word32", 4294967295.0, 3) == b"\xff\xff\xff\xff"


@pytest.mark.parametrize("v, word", [(1.5, 0x3FC00000), (-2.0, 0xC0000000), (0.1, 0x3DCCCCCD)])
def test_a_binary32_fill_is_the_pattern_little_endian(v, word):
    assert encoded_fill("binary32", v, 0) == bytes([word & 0xFF, word >> 8 & 0xFF, word >> 16 & 0xFF, word >> 24])
