"""binary32 patterns computed exactly in the language (Float32Exact, FloatLiteralSpec, Bob.Learner).

Independent references: numpy.float32 (round to nearest even from a binary64
that is itself within 2^-53 of the decimal, so equal for these values), and
hand-derived patterns for the edge cases.
"""
from decimal import Decimal, getcontext
from fractions import Fraction

import numpy as np
import pytest

from plan_support import call, nat

EXACT = "Float32Exact.float32ExactRational"


def bits(x) -> int:
    return int(np.float32(x).view(np.uint32))


@pytest.mark.parametrize("num, den, expected", [
    (1, 256, 0x3b800000),               # 2^-8: biased exponent 119, no fraction
    (1, 1, 0x3f800000),
    (3, 2, 0x3fc00000),
    (1, 3, 0x3eaaaaab),                 # 0.0101..: rounds up
    (0, 7, 0),
    (1, 2 ** 149, 0x00000001),          # the smallest subnormal
    (3, 2 ** 150, 0x00000002),          # 1.5 ulp: tie, to even (2)
    (1, 2 ** 150, 0x00000000),          # 0.5 ulp: tie, to even (0)
    (2 ** 24 + 1, 2 ** 24, 0x3f800000),  # 1 + 2^-24: tie between 1 and 1 + 2^-23, to even
    (2 ** 24 + 3, 2 ** 24, 0x3f800002),  # 1 + 3 * 2^-24: tie, to even (up)
    (2 ** 128, 1, 0x7f800000),          # past the largest finite: infinity
    (1, 0, 0x7fc00000),                 # no value: the quiet NaN
])
def test_exact_rational_cases(physical, num, den, expected):
    assert call(physical, EXACT, num, den) == expected


def test_exact_rational_agrees_with_numpy_on_decimals(physical):
    for text in ["0.1", "0.9", "0.999", "1e-8", "0.01", "3.14159", "65504", "1e30", "1e-30", "123456789"]:
        value = Fraction(text)
        assert call(physical, EXACT, value.numerator, value.denominator) == bits(float(value)), text


@pytest.mark.parametrize("name, decimal, expected", [
    ("bobLearningRate", 0.1, 0x3dcccccd),
    ("bobBeta1", 0.9, 0x3f666666),
    ("bobBeta2", 0.999, 0x3f7fbe77),
    ("bobEpsilon", 1e-8, 0x322bcc77),
    ("bobWeightDecay", 0.01, 0x3c23d70a),
])
def test_learner_constants_are_numpy_float32(physical, name, decimal, expected):
    assert nat(physical, name) == expected == bits(decimal)
    # and the library derives the same pattern (the `Derived` equality's right side)
    value = Fraction(str(decimal))
    assert call(physical, EXACT, value.numerator, value.denominator) == expected


def _nearest_binary32_margin(value: Decimal, pattern: int) -> Decimal:
    """How far `value` is from the nearest rounding boundary around `pattern`."""
    below = Decimal(float(np.uint32(pattern - 1).view(np.float32)))
    at = Decimal(float(np.uint32(pattern).view(np.float32)))
    above = Decimal(float(np.uint32(pattern + 1).view(np.float32)))
    low, high = (below + at) / 2, (at + above) / 2
    assert low < value < high
    return min(value - low, high - value)


def test_float_literals_are_nearest(physical):
    getcontext().prec = 60
    ln2 = Decimal(2).ln()
    log2e = 1 / ln2
    assert nat(physical, "float32Log2E") == 0x3fb8aa3b
    assert nat(physical, "float32Ln2") == 0x3f317218
    # the 30-digit truncations the module derives them from are within 1e-30
    # of the constants, and both are far (> 1e-12) from any rounding boundary
    for constant, digits, name in ((log2e, 1442695040888963407359924681001, "float32Log2E"),
                                   (ln2, 693147180559945309417232121458, "float32Ln2")):
        pattern = nat(physical, name)
        truncation = Decimal(digits) / Decimal(10) ** 30
        assert abs(truncation - constant) < Decimal("1e-30")
        assert _nearest_binary32_margin(constant, pattern) > Decimal("1e-12")
        assert call(physical, EXACT, digits, 10 ** 30) == pattern
