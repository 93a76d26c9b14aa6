"""The NumPy reference's arithmetic is IEEE, as the kernels' and the host's: an overflow or a
NaN is a value, never a NumPy RuntimeWarning on stderr, which the C host never prints (probe
s32 partnet finding 5: a diverging run printed "invalid value encountered in scalar add" from
reference.update on each reference peer)."""
from __future__ import annotations

import math
import struct
import warnings

from partitioned_regression import reference as R


def bits(value: float) -> int:
    return struct.unpack("<Q", struct.pack("<d", value))[0]


def test_an_overflowing_or_nan_update_gives_its_ieee_value_without_a_warning():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        # decay * a overflows to inf; inf + -inf is NaN (invalid); w - rate * NaN is NaN
        w, a = R.update(1.0, 1e308, -math.inf, 1e10, 0.5)
        assert math.isnan(a) and math.isnan(w)
        # the overflow alone: a = inf, w = 1 - 0.5 inf = -inf
        w, a = R.update(1.0, 1e308, 0.0, 1e10, 0.5)
        assert (a, w) == (math.inf, -math.inf)
        # the linear step's subtraction: inf - inf is NaN
        p, r, g = R.linear_step(3e38, 3e38, math.inf)
        assert p == math.inf and math.isnan(r) and math.isnan(g)
        assert math.isnan(R.predict((math.inf, -math.inf)))


def test_finite_updates_keep_their_bits():
    w, a = R.update(0.25, 0.125, 0.75, 0.9, 0.01)
    a_expected = 0.9 * 0.125 + 0.75
    assert bits(a) == bits(a_expected) and bits(w) == bits(0.25 - 0.01 * a_expected)
