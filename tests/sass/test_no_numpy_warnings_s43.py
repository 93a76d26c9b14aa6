"""The simulator computes IEEE 754 results silently (probe s43 f64div): NumPy warned -- "invalid value encountered in
cast" (cvt.f64.f32 of a signalling NaN), "overflow encountered in cast" (cvt.rn.f32.f64 past binary32's range),
"invalid value encountered in rint" (cvt.rni.f32.f32 of a NaN) -- and those RuntimeWarnings reached `bobc sim`'s
stderr, though each result is the one IEEE 754 defines (a NaN, an infinity).  The kernels run here with every
warning an error; the results are IEEE 754's (5.4.2 formatOf conversions: a NaN stays a NaN, an overflow rounds
to infinity to nearest; 5.9 roundToIntegral of a NaN is a NaN)."""
from __future__ import annotations

import math
import warnings

import numpy as np
import pytest

from tests.sass.test_f64_division_s43 import run

CASES = {  # name -> (PTX on a = %fd1, its low word %f1; a's 64 bits; the check of the binary64 stored)
    "widen_snan": ("cvt.f64.f32 %fd3, %f1;", 0x7F800001, lambda d, w: math.isnan(d)),
    "narrow_huge": ("cvt.rn.f32.f64 %f3, %fd1; cvt.f64.f32 %fd3, %f3;", 0x7E37E43C8800759C,      # 1e300
                    lambda d, w: d == math.inf),
    "round_nan": ("cvt.rni.f32.f32 %f3, %f1; cvt.f64.f32 %fd3, %f3;", 0x7F800001,
                  lambda d, w: math.isnan(d)),
}


@pytest.mark.parametrize("arch", ["sm_86", "sm_90"])
@pytest.mark.parametrize("name", sorted(CASES))
def test_ieee_exceptions_give_results_without_warnings(arch, name, tmp_path, needs_ptxas):
    body, a, check = CASES[name]
    words = np.zeros((4, 128), np.uint32)
    words[0], words[1] = a & 0xFFFFFFFF, a >> 32
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        got = run(name, arch, body, words, tmp_path)
    value = float(got.view(np.float64)[0])
    assert check(value, int(got[0])), f"{name}: {int(got[0]):016x}"
