"""Bob's AdamW step scalars (Bob.Learner bobAdamStepScalars, Platform.Linux.Nvidia.PlanHostAdamW).

Reference: docs/formats.md's definitions computed independently here with
Fractions and 80-digit Decimal square roots, then rounded to binary32.
"""
import struct
from decimal import Decimal, getcontext
from fractions import Fraction

import numpy as np
import pytest

from plan_support import call

LR, BETA1, BETA2, EPS, WD = 0x3dcccccd, 0x3f666666, 0x3f7fbe77, 0x322bcc77, 0x3c23d70a


def value(pattern: int) -> Fraction:
    return Fraction(float(np.uint32(pattern).view(np.float32)))


def nearest(x) -> int:
    """binary32 nearest a Fraction/Decimal (via neighbours checked exactly)."""
    x = Fraction(x)
    f = np.float32(float(x))
    candidates = [np.nextafter(f, np.float32(0)), f, np.nextafter(f, np.float32(np.inf))]
    best = min(candidates, key=lambda c: (abs(Fraction(float(c)) - x), int(np.float32(c).view(np.uint32)) & 1))
    return int(np.float32(best).view(np.uint32))


@pytest.mark.parametrize("t", [1, 2, 3, 10, 100, 1000])
def test_step_scalars(physical, t):
    getcontext().prec = 80
    scalars = call(physical, "bobAdamStepScalars", t)
    assert len(scalars) == 36
    words = struct.unpack("<9I", scalars)
    one_minus_b2t = 1 - value(BETA2) ** t
    sqrt = Fraction((Decimal(one_minus_b2t.numerator) / Decimal(one_minus_b2t.denominator)).sqrt())
    alpha = value(LR) * sqrt / (1 - value(BETA1) ** t)
    epsilon = value(EPS) * sqrt
    assert words[0] == nearest(alpha)
    assert words[1] == nearest(epsilon)
    assert words[2] == nearest(1 - value(LR) * value(WD))       # decay
    assert words[3:7] == (BETA1, nearest(1 - value(BETA1)), BETA2, nearest(1 - value(BETA2)))
    assert words[7:] == (65536, t)


def test_first_step_by_hand(physical):
    # t = 1 with the binary32 hyperparameters (lr = 0.10000000149, beta1 =
    # 0.89999997616, beta2 = 0.99900001287): sqrt(1 - beta2) = 0.031622573,
    # alpha = 0.10000000149 * 0.031622573 / 0.10000002384 = 0.031622566
    words = struct.unpack("<7f2I", call(physical, "bobAdamStepScalars", 1))
    assert words[0] == pytest.approx(0.031622566, rel=1e-7)
    assert words[1] == pytest.approx(0.99999999392e-8 * 0.031622573, rel=1e-7)
    assert words[2] == pytest.approx(0.999, rel=1e-7)
