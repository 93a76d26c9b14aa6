"""A fill's bytes and its place in the parameter block, at their edges (probe s39 mutants2: the
reference host writing a binary32 fill big-endian, a fill ending one byte past its launch's
parameter block, and the block measured without the target's parameter base all went through the
related tests).

Expected values by hand: IEEE 754 binary32 1.0 is 0x3F800000 and -2.5 is 0xC0200000, little-endian
in the parameter block (docs/formats.md: every word little-endian); a fill writes 4 bytes at its
offset counted from the target's parameter base (docs/host-plan-facts.md), so a block of N bytes
past the base holds offsets 0..N-4."""
from types import SimpleNamespace

import pytest

from bobc.plan.host import Fill, Scalar


def fill(encoding="binary32", value=1.0, offset=0) -> Fill:
    return Fill(launch=0, offset=offset, step=0, encoding=encoding, value=Scalar("constant", value=value))


@pytest.mark.parametrize("value, word", [(1.0, 0x3F800000), (-2.5, 0xC0200000)])
def test_a_binary32_fill_is_its_ieee_word_little_endian(value, word):
    assert fill(value=value).encode(0) == bytes([word & 0xFF, word >> 8 & 0xFF, word >> 16 & 0xFF, word >> 24])


def test_a_word32_fill_is_little_endian():
    assert fill("word32", 0x01020304).encode(0) == b"\x04\x03\x02\x01"


BASE = 0x210                     # any target's parameter base: the block is counted from it
LAUNCH = SimpleNamespace(parameter_bytes=BASE + 32, identity=b"k")


@pytest.mark.parametrize("offset", [0, 16, 28])
def test_a_fill_inside_the_parameter_block_is_not_an_overrun(offset):
    assert fill(offset=offset).overrun(LAUNCH, BASE) is None


@pytest.mark.parametrize("offset", [29, 32, 100])
def test_a_fill_past_the_parameter_block_counted_from_the_base_is_an_overrun(offset):
    why = fill(offset=offset).overrun(LAUNCH, BASE)
    assert why == (f"writes bytes {offset}..{offset + 3} of launch 0 (k)'s parameters, past its 32-byte "
                   f"parameter block")
