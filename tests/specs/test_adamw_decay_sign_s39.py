"""Platform.Linux.Nvidia.PlanHostAdamW's nvidiaPlanHostAdamWDecay is the binary32 nearest
1 - lr wd (docs/formats.md, "AdamW parameter block"), negative where lr wd > 1 (probe s39 stdlib
finding 7: it saturated to +0).  Oracle: exact Fractions of numpy's binary32 values, rounded to
nearest even by hand."""
from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest


def bits(x: float) -> int:
    return int(np.float32(x).view(np.uint32))


def value(pattern: int) -> Fraction:
    return Fraction(float(np.uint32(pattern).view(np.float32)))


def nearest_binary32(x: Fraction) -> int:
    sign = 0x80000000 if x < 0 else 0
    x = abs(x)
    if x == 0:
        return sign
    e = x.numerator.bit_length() - x.denominator.bit_length()
    if Fraction(2) ** e > x:
        e -= 1
    e = max(e, -126)
    m = round(x / Fraction(2) ** (e - 23))         # ties to even
    if m == 1 << 24:
        m, e = m >> 1, e + 1
    return sign | (m if m < 1 << 23 else ((e + 127) << 23) + m - (1 << 23))


CASES = [(0.1, 0.01), (1.0, 1.0), (2.0, 1.0), (4.0, 0.75), (3.0, 0.5), (1e3, 0.1), (0.5, 3.0), (1e-3, 1e-8), (7.0, 0.0)]


@pytest.mark.parametrize("lr, wd", CASES)
def test_decay_is_the_nearest_binary32_of_one_minus_lr_wd(probe, lr, wd):
    program = probe("import Platform.Linux.Nvidia.PlanHostAdamW\n\n"
                    f"def decay : Nat = (nvidiaPlanHostAdamWDecay {bits(lr)} {bits(wd)})\n")
    expected = nearest_binary32(1 - value(bits(lr)) * value(bits(wd)))
    assert program.value("decay").value == expected
    if lr * wd > 1:
        assert expected >> 31 == 1          # negative, as 1 - lr wd is
    if lr * wd == 1:
        assert expected == 0                # 1 - 1 is +0 under round to nearest
