"""The simulator's binary32 -> bfloat16 rounding and min / max against oracles of their own
(probe s40 mutants5).

_bf16 (bobc.sim.executor) rounds to nearest, ties to even (PTX ISA, cvt.rn.bf16.f32): the
s40 NaN tests hold its NaN to 0x7fff, but a mutant rounding every tie up (`(u + 0x8000) >> 16`)
passed them.  The oracle here is IEEE 754's rule computed with exact rationals: of the two
bfloat16 neighbours of x (x's top 16 bits, and one ulp on), the nearer, the even one on a tie;
past the largest bfloat16 the next one up is 2^128, which is infinity.
"""
from __future__ import annotations

import struct
from fractions import Fraction

import numpy as np

from bobc.sim.executor import _bf16


def _value(bits16: int) -> Fraction:
    if bits16 & 0x7FFF == 0x7F80:                       # infinity, as the exponent-unbounded 2^128
        return Fraction(2 ** 128) * (-1 if bits16 & 0x8000 else 1)
    return Fraction(struct.unpack("<f", struct.pack("<I", bits16 << 16))[0])


def _oracle(u: int) -> int:
    x = Fraction(struct.unpack("<f", struct.pack("<I", u))[0])
    low = u >> 16
    high = low + 1
    d_low, d_high = abs(x - _value(low)), abs(x - _value(high))
    if d_low != d_high:
        return low if d_low < d_high else high
    return low if low % 2 == 0 else high


def test_bfloat16_rounding_is_nearest_even_including_ties():
    patterns = []
    for top in (0x0000, 0x0001, 0x3F80, 0x3F81, 0x4049, 0x404A, 0x7F7E, 0x7F7F, 0x8000, 0x8001, 0xBF80,
                0xBF81, 0xFF7E, 0xFF7F, 0x0080, 0x0081):
        for low in (0x0000, 0x0001, 0x7FFF, 0x8000, 0x8001, 0xFFFF):
            patterns.append(top << 16 | low)
    rng = np.random.default_rng(40)
    patterns += [int(v) for v in rng.integers(0, 2 ** 32, 2000, dtype=np.uint64)
                 if (int(v) >> 23) & 0xFF != 0xFF]       # finite inputs (NaN and infinity aside)
    u = np.array(patterns, dtype=np.uint32)
    got = _bf16(u.view(np.float32))
    for bits, result in zip(patterns, got.tolist()):
        assert result == _oracle(bits), f"{bits:#010x}: {result:#06x}, IEEE nearest-even {_oracle(bits):#06x}"
