"""Integer forms ptxas writes when the operands are kernel parameters (warp-uniform: UIMAD, constant-bank sources),
each held to the PTX ISA's definition computed here in Python integers (probe s45 simint,
/work/notes/s45/probe-simint.md's uniform harness).  One thread a launch: the parameters are the operands."""
from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
from ptx_kernels import compile_ptx  # noqa: E402

from bobc.sim.kernel import run_kernel  # noqa: E402

TARGETS = pytest.mark.parametrize("target", ["sm_86", "sm_90"])
M32, M64 = (1 << 32) - 1, (1 << 64) - 1


def _s32(x: int) -> int:
    return x - (1 << 32) if x >> 31 else x


def _ptx(body: str, outputs: int) -> str:
    """%a, %b, %c are the parameters A, B, C (.u32); `body` writes %o0..%o{outputs-1}, stored to out[0..]."""
    stores = "\n".join(f"  st.global.b32 [%rd4+{4 * k}], %o{k};" for k in range(outputs))
    return f""".version 8.0
.target sm_86
.address_size 64
.visible .entry k(.param .u64 out, .param .u32 A, .param .u32 B, .param .u32 C)
{{
  .reg .b32 %a, %b, %c, %o<{outputs}>; .reg .b64 %rd<8>, %w<8>;
  ld.param.u64 %rd4, [out]; ld.param.u32 %a, [A]; ld.param.u32 %b, [B]; ld.param.u32 %c, [C];
{body}
{stores}
  ret;
}}
"""


def _run(target: str, body: str, outputs: int, a: int, b: int, c: int) -> list[int]:
    cubin = compile_ptx(_ptx(body, outputs), target)
    out = run_kernel(cubin, target, grid=1, block=1, params=["out", np.uint32(a), np.uint32(b), np.uint32(c)],
                     buffers={"out": np.zeros(outputs, np.uint32)})["out"]
    return [int(x) for x in out]


EDGES = [(0, 0, 0), (M32, M32, M32), (0x80000000, M32, 1), (0x7FFFFFFF, 0x80000000, 0xDEADBEEF),
         (0x12345678, 0x9ABCDEF0, 0x0F0F0F0F)]


@TARGETS
@pytest.mark.parametrize("a, b, c", EDGES)
def test_a_wide_product_of_parameters_in_uniform_registers(target, a, b, c):
    # sm_90: LDC R5, c[0x0][0x220] (scoreboard 0), then UIMAD.WIDE UR8, UR4, UR5, URZ and UIMAD.WIDE.U32 UR4, UR4,
    # UR5, URZ: the uniform pair UR5:UR4 is written, not R5:R4 -- the checker had read R5 as overwritten while the
    # LDC into R5 was outstanding, a false hazard on ptxas's code.  Expected: PTX mad.wide.{s32,u32}, a * b + c
    # exactly, in Python integers.
    out = _run(target, """  cvt.u64.u32 %w3, %c; mad.wide.s32 %w1, %a, %b, %w3; mad.wide.u32 %w2, %a, %b, %w3;
  mov.b64 {%o0, %o1}, %w1; mov.b64 {%o2, %o3}, %w2;""", 4, a, b, c)
    assert out[1] << 32 | out[0] == (_s32(a) * _s32(b) + c) & M64
    assert out[3] << 32 | out[2] == (a * b + c) & M64


@TARGETS
@pytest.mark.parametrize("a, b", [(0, M32), (M32, M32), (0x80000000, 0xFFFFFFFE), (0xDEADBEEF, 0x7FFFFFFF), (5, 0)])
def test_a_complemented_constant_or_uniform_flo_source(target, a, b):
    # clz.b32 / bfind.u32 of not.b32 of a parameter: sm_86 FLO.U32 R7, ~c[0x0][0x168], sm_90 FLO.U32 R7, ~UR4;
    # bfind.s64 of a parameter pair.  Expected: PTX clz / bfind (bfind.s64: the highest bit unlike the sign bit).
    out = _run(target, """  not.b32 %o0, %a; clz.b32 %o1, %o0; bfind.u32 %o2, %o0;
  mov.b64 %w1, {%a, %b}; bfind.s64 %o3, %w1;""", 4, a, b, 0)
    inverted = ~a & M32
    both = b << 32 | a
    magnitude = ~both & M64 if both >> 63 else both
    assert out == [inverted, 32 - inverted.bit_length(), inverted.bit_length() - 1 if inverted else M32,
                   magnitude.bit_length() - 1 if magnitude else M32]


@TARGETS
@pytest.mark.parametrize("a, b, c", [(0x7FFFFFFF, 1, 0), (0x80000000, M32, 5), (0x80000000, 1, 0x80000000),
                                     (0x7FFFFFFF, 0x7FFFFFFF, 0x7FFFFFFF), (3, 0xFFFFFFFD, M32)])
def test_saturating_sums_of_parameters(target, a, b, c):
    # sm_86: PLOP3.LUT P2, PT, R3.SIGN, c[0x0] [0x16c].SIGN, R2.SIGN, 0x8, 0x0 -- a constant's sign bit, printed
    # with a space; refused before s45.  Expected: PTX add.sat / sub.sat / mad.hi.sat .s32, the exact value clamped
    # to [-2^31, 2^31 - 1].
    def clamp(v):
        return min(max(v, -2**31), 2**31 - 1) & M32
    out = _run(target, "  add.sat.s32 %o0, %a, %b; sub.sat.s32 %o1, %a, %b; mad.hi.sat.s32 %o2, %a, %b, %c;", 3, a, b, c)
    assert out == [clamp(_s32(a) + _s32(b)), clamp(_s32(a) - _s32(b)), clamp((_s32(a) * _s32(b) >> 32) + _s32(c))]
