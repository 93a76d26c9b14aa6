"""The binary32 MUFU.LG2 / .RCP / .RSQ / .SQRT flush a subnormal operand to a zero of its sign (RCP a
subnormal result too), as the unit does (probe s45 newuser10: a softmax classifier's
lg2.approx.ftz.f32 of a probability).  The expected values are the PTX ISA's, computed here without
bobc: lg2 / rcp / rsqrt / sqrt .approx.ftz.f32 flush subnormal inputs (and rcp's results) to
sign-preserving zero, then lg2(+-0) = -inf, rcp(+-0) = +-inf, rsqrt(+-0) = +-inf, sqrt(+-0) = +-0;
the forms without .ftz support subnormals.  ptxas compiles each .ftz form to the lone MUFU, and
wraps the others in a scaling by 2^24 of an operand below 2^-126 (rcp's above 2^126 by 1/4), which
is why the unit must flush: before the fix the simulator gave MUFU.LG2 of 2^-149 as -149 and
MUFU.SQRT of 2^-148 as 2^-74.  Every operand is a power of two (or a zero), so every exact result is
a binary32 and the approximations' ulps do not enter."""
from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
from ptx_kernels import compile_ptx  # noqa: E402

from bobc.sim.kernel import run_kernel  # noqa: E402

FUNCTIONS = ("lg2", "rcp", "rsqrt", "sqrt")
PTX = """.version 8.0
.target sm_86
.address_size 64
.visible .entry k(.param .u64 out, .param .u64 in)
{
  .reg .b32 %r<4>; .reg .b64 %rd<8>; .reg .f32 %f<12>;
  mov.u32 %r1, %tid.x; mul.wide.u32 %rd1, %r1, 4;
  ld.param.u64 %rd2, [in]; add.s64 %rd2, %rd2, %rd1; ld.global.f32 %f1, [%rd2];
""" + "".join(f"  {f}.approx.ftz.f32 %f{2 + i}, %f1; {f}.approx.f32 %f{6 + i}, %f1;\n" for i, f in enumerate(FUNCTIONS)) + """
  ld.param.u64 %rd3, [out]; mul.wide.u32 %rd4, %r1, 32; add.s64 %rd3, %rd3, %rd4;
  st.global.v4.f32 [%rd3], {%f2, %f3, %f4, %f5};
  st.global.v4.f32 [%rd3+16], {%f6, %f7, %f8, %f9};
  ret;
}
"""
# subnormals (either sign), the least normal, and large operands whose reciprocal is subnormal
EXPONENTS = (-149, -148, -140, -127, -126, 126, 127)
OPERANDS = np.array([s * 2.0 ** e for e in EXPONENTS for s in (1, -1)], np.float32)


def _exact(function: str, x: float) -> float:
    """The PTX ISA's value of `function`.approx.f32 at x (exact: x is a power of two or a zero)."""
    with np.errstate(all="ignore"):
        v = np.float64(x)
        return {"lg2": np.log2(v), "rcp": 1 / v, "rsqrt": 1 / np.sqrt(v), "sqrt": np.sqrt(v)}[function]


def _flushed(x: float) -> float:
    return np.copysign(0.0, x) if abs(x) < 2.0 ** -126 else x


@pytest.mark.parametrize("target", ["sm_86", "sm_90"])
def test_the_ftz_forms_flush_subnormals_and_the_others_keep_them(target):
    out = run_kernel(compile_ptx(PTX, target), target, grid=1, block=len(OPERANDS), params=["out", "in"],
                     buffers={"out": np.zeros((len(OPERANDS), 8), np.float32), "in": OPERANDS})["out"]
    for row, x in enumerate(OPERANDS.astype(np.float64)):
        for column, function in enumerate(FUNCTIONS):
            ftz = _exact(function, _flushed(x))
            if function == "rcp":
                ftz = _flushed(ftz)
            for got, want, form in ((out[row, column], ftz, ".ftz"), (out[row, 4 + column], _exact(function, x), "")):
                with np.errstate(over="ignore"):
                    want = np.float32(want)        # rcp(2^-149) is 2^149: +inf in binary32
                assert (np.isnan(got) and np.isnan(want)) or got.tobytes() == want.tobytes(), \
                    f"{target}: {function}.approx{form}.f32({x!r}) = {got!r}, the PTX ISA's {want!r}"
