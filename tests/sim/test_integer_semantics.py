"""The simulator's integer instructions and integer conversions on kernels ptxas compiled from PTX
(ptx_kernels.compile_ptx: ptxas chooses the SASS), each held to the PTX ISA's semantics of the PTX
computed here in Python at the edge values: carries of 2 (IADD3 with two carry-outs), mad.hi's addend
(IMAD.HI adds a register pair), wrapped funnel-shift amounts >= 32 (SHF.W), 64-bit integers rounded
once to binary32 (I2F.S64 / .U64), 16- and 8-bit sources (I2F.S16 / .U16 / .S8), saturation to
16-, 8- and 64-bit destinations (F2I), and mul.hi.u64 / mad.hi.cc (IMAD.WIDE.U32 and IMAD.HI with
a carry-out predicate, IMAD.WIDE.U32.X with a carry-in), control-code checker on."""
from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
from ptx_kernels import compile_ptx  # noqa: E402

from bobc.sim.faults import SimulationFault, Unmodeled  # noqa: E402
from bobc.sim.hazards import Checker  # noqa: E402
from bobc.sim.kernel import run_kernel  # noqa: E402
from bobc.sim.sass_frontend import parse_line  # noqa: E402

TARGETS = pytest.mark.parametrize("target", ["sm_86", "sm_90"])
M32, M64 = (1 << 32) - 1, (1 << 64) - 1


def _ptx(body: str, outputs: int) -> str:
    """Thread i reads %a = A[i], %b = B[i], %c = C[i] (.b32; %fa the same bits as .f32), runs `body`,
    which writes %o0..%o{outputs-1}, stored to out[i, :]."""
    stores = "\n".join(f"  st.global.b32 [%rd5+{4 * k}], %o{k};" for k in range(outputs))
    return f""".version 8.0
.target sm_86
.address_size 64
.visible .entry k(.param .u64 out, .param .u64 A, .param .u64 B, .param .u64 C)
{{
  .reg .b32 %a, %b, %c, %o<{outputs}>, %i, %r<8>; .reg .b64 %rd<8>, %w<8>; .reg .f32 %fa, %f<8>; .reg .b16 %h<8>;
  mov.u32 %i, %tid.x;
  ld.param.u64 %rd1, [A]; ld.param.u64 %rd2, [B]; ld.param.u64 %rd3, [C]; ld.param.u64 %rd4, [out];
  mul.wide.u32 %rd6, %i, 4;
  add.s64 %rd1, %rd1, %rd6; add.s64 %rd2, %rd2, %rd6; add.s64 %rd3, %rd3, %rd6;
  ld.global.b32 %a, [%rd1]; ld.global.b32 %b, [%rd2]; ld.global.b32 %c, [%rd3];
  mov.b32 %fa, %a;
  mul.wide.u32 %rd6, %i, {4 * outputs};
  add.s64 %rd5, %rd4, %rd6;
{body}
{stores}
  ret;
}}
"""


def _run(target, body, outputs, a, b=None, c=None) -> list[list[int]]:
    a = np.asarray(a, dtype=np.uint32)
    n = a.size
    b = np.zeros(n, np.uint32) if b is None else np.asarray(b, dtype=np.uint32)
    c = np.zeros(n, np.uint32) if c is None else np.asarray(c, dtype=np.uint32)
    out = run_kernel(compile_ptx(_ptx(body, outputs), target), target, grid=1, block=n,
                     params=["out", "A", "B", "C"],
                     buffers={"out": np.zeros((n, outputs), np.uint32), "A": a, "B": b, "C": c})["out"]
    return [[int(x) for x in row] for row in out]


def _s32(x: int) -> int:
    return x - (1 << 32) if x >> 31 else x


def _f32_bits(x: float) -> int:
    return int(np.array([x], dtype=np.float32).view(np.uint32)[0])


@TARGETS
def test_a_sum_of_three_words_carries_two(target):
    # add.s64 of three zero-extended words: IADD3 R, P0, P1, a, b, c ; IADD3.X R, RZ, RZ, RZ, P0, P1
    a = [M32, M32, M32, 0x80000000, 1, 0]
    b = [M32, M32, 1, 0x80000000, M32, 0]
    c = [M32, 1, 0, 0x80000000, M32, 0]
    out = _run(target, """  cvt.u64.u32 %w1, %a; cvt.u64.u32 %w2, %b; cvt.u64.u32 %w3, %c;
  add.s64 %w4, %w1, %w2; add.s64 %w4, %w4, %w3; mov.b64 {%o0, %o1}, %w4;""", 2, a, b, c)
    for row, x, y, z in zip(out, a, b, c):
        assert row[1] << 32 | row[0] == x + y + z, (hex(x), hex(y), hex(z))


@TARGETS
def test_mad_hi_adds_its_addend(target):
    # mad.hi: MOV R4, RZ with c in R5; IMAD.HI(.U32) Rd, a, b, R4 adds the pair R5:R4
    a = [0x80000001, 0x12345678, M32, 0x80000000, 7]
    b = [0xDEADBEEF, 0x9ABCDEF0, 0, 0x80000000, M32]
    c = [33, 32, 1, M32, M32]
    out = _run(target, "  mad.hi.u32 %o0, %a, %b, %c;\n  mad.hi.s32 %o1, %a, %b, %c;", 2, a, b, c)
    for row, x, y, z in zip(out, a, b, c):
        assert row[0] == ((x * y >> 32) + z) & M32
        assert row[1] == ((_s32(x) * _s32(y) >> 32) + z) & M32


@TARGETS
def test_mad_hi_cc_sets_the_carry(target):
    # mad.hi.cc: IMAD.HI(.U32) Rd, P0, a, b, Rc; addc.u32 d, 0, 0 reads the carry
    a = [M32, 1, 0x80000000, 0xDEADBEEF, 0x7FFFFFFF]
    b = [M32, 2, 0x7FFFFFFF, 0x12345678, 0x80000000]
    c = [M32, 3, M32, 0x9ABCDEF0, 0x40000000]
    out = _run(target, "  mad.hi.cc.u32 %o0, %a, %b, %c; addc.u32 %o1, 0, 0;\n"
                       "  mad.hi.cc.s32 %o2, %a, %b, %c; addc.u32 %o3, 0, 0;", 4, a, b, c)
    for row, x, y, z in zip(out, a, b, c):
        high, signed = (x * y >> 32) & M32, (_s32(x) * _s32(y) >> 32) & M32
        assert row == [(high + z) & M32, (high + z) >> 32, (signed + z) & M32, (signed + z) >> 32]


@TARGETS
def test_mul_hi_u64_runs_imad_wide_with_carries(target):
    # mul.hi.u64: IMAD.WIDE.U32 R10, P0, a, b, Rc and IMAD.WIDE.U32.X ..., P0
    a = [M32, 1, 0x80000000, 0xDEADBEEF, 0, M32]
    b = [M32, 2, 0x7FFFFFFF, 0x12345678, M32, 0]
    c = [M32, 3, M32, 0x9ABCDEF0, M32, M32]
    out = _run(target, "  mov.b64 %w1, {%a, %b}; mov.b64 %w2, {%c, %a}; mul.hi.u64 %w3, %w1, %w2;\n"
                       "  mov.b64 {%o0, %o1}, %w3;", 2, a, b, c)
    for row, x, y, z in zip(out, a, b, c):
        assert row[1] << 32 | row[0] == (y << 32 | x) * (x << 32 | z) >> 64


@TARGETS
def test_funnel_shifts_wrap_their_amount(target):
    # shf.{l,r}.wrap.b32 d, lo, hi, n shifts by n & 31: SHF.L.W.U32.HI / SHF.R.W.U32
    lo = [0xDEADBEEF] * 8 + [0x9ABCDEF0, 0x11111111]
    hi = [0x80000001] * 8 + [0x12345678, 7]
    n = [0, 1, 31, 32, 33, 63, 64, 0xFFFFFFFF, 0x80000004, 0xFFFFFFE1]
    out = _run(target, "  shf.l.wrap.b32 %o0, %a, %b, %c;\n  shf.r.wrap.b32 %o1, %a, %b, %c;", 2, lo, hi, n)
    for row, x, y, k in zip(out, lo, hi, n):
        both = y << 32 | x
        assert row == [(both << (k & 31)) >> 32 & M32, (both >> (k & 31)) & M32], hex(k)


def _rounded_once(n: int, mode: str) -> float:
    """The integer n rounded once to 24 significant bits (binary32) by `mode`."""
    m = abs(n)
    e = max(m.bit_length() - 24, 0)
    q, r = divmod(m, 1 << e)
    half = (1 << e) >> 1
    if mode == "RN":
        q += r > half or (r == half and r and q & 1)
    elif mode == ("RM" if n < 0 else "RP"):
        q += r != 0
    return float(-q * 2 ** e if n < 0 else q * 2 ** e)


@TARGETS
def test_64_bit_integers_round_once_to_binary32(target):
    # cvt.{rn,rz,rm,rp}.f32.{s64,u64}: I2F.S64 / I2F.U64, the integer rounded once
    values = [2**60 + 2**36 + 1, -(2**60 + 2**36 + 1), 2**40 + 2**16 + 1, 2**24 + 1, -(2**24 + 3),
              2**63 - 1, -2**63, 2**53 + 2**29 + 1, 0, -1]
    bits = [v & M64 for v in values]
    modes = ["RN", "RZ", "RM", "RP"]
    body = "  mov.b64 %w1, {%a, %b};\n" + "\n".join(
        f"  cvt.{m.lower()}.f32.s64 %f{k}, %w1; mov.b32 %o{k}, %f{k};\n"
        f"  cvt.{m.lower()}.f32.u64 %f{k + 4}, %w1; mov.b32 %o{k + 4}, %f{k + 4};" for k, m in enumerate(modes))
    out = _run(target, body, 8, [v & M32 for v in bits], [v >> 32 for v in bits])
    for row, v, u in zip(out, values, bits):
        for k, mode in enumerate(modes):
            # each expected value is exact in binary32 (24 significant bits, exponent < 64)
            assert row[k] == _f32_bits(_rounded_once(v, mode)), (v, mode, "s64")
            assert row[k + 4] == _f32_bits(_rounded_once(u, mode)), (u, mode, "u64")


@TARGETS
def test_16_and_8_bit_sources_convert_their_low_bits(target):
    # cvt.rn.f32.{s16,u16,s8} of the low half-word / byte: I2F.S16 / .U16 / .S8 of the whole register
    c = [0xFFFF, 0x8000, 0x12345, 0x7FFF, 0xFFFF0080, 0x17F]
    out = _run(target, "  cvt.u16.u32 %h1, %c; cvt.rn.f32.s16 %f1, %h1; mov.b32 %o0, %f1;\n"
                       "  cvt.rn.f32.u16 %f2, %h1; mov.b32 %o1, %f2;\n"
                       "  cvt.u8.u32 %h2, %c; cvt.rn.f32.s8 %f3, %h2; mov.b32 %o2, %f3;\n"
                       "  cvt.rn.f64.s16 %w1, %h1; mov.b64 {%o3, %o4}, %w1;", 5, [0] * len(c), None, c)
    for row, x in zip(out, c):
        half, byte = x & 0xFFFF, x & 0xFF
        s16, s8 = half - (half >> 15 << 16), byte - (byte >> 7 << 8)
        assert row[:3] == [_f32_bits(s16), _f32_bits(half), _f32_bits(s8)], hex(x)
        assert row[4] << 32 | row[3] == int(np.array([s16], np.float64).view(np.uint64)[0]), hex(x)


@TARGETS
def test_float_to_integer_saturates_to_the_destination(target):
    # cvt.rzi.{s16,u16,s8,s64,u64}.f32 clamp to the destination's range (PTX: .sat implied):
    # F2I.S16.TRUNC.NTZ (read as the sign-extended s16), F2I.S8, F2I.S64.TRUNC, F2I.U64.TRUNC
    x = [70000.0, -70000.0, -1e30, -9.3e18, 1e30, -2.0**63, 2.0**63, 300.5, -129.9, 127.9, -0.5, 40000.0]
    out = _run(target, """  cvt.rzi.s16.f32 %h1, %fa; cvt.s32.s16 %o0, %h1;
  cvt.rzi.u16.f32 %h2, %fa; cvt.u32.u16 %o1, %h2;
  cvt.rzi.s8.f32 %h3, %fa; cvt.s32.s8 %o2, %h3;
  cvt.rzi.s64.f32 %w1, %fa; mov.b64 {%o3, %o4}, %w1;
  cvt.rzi.u64.f32 %w2, %fa; mov.b64 {%o5, %o6}, %w2;""", 7, [_f32_bits(v) for v in x])
    for row, v in zip(out, x):
        t = int(np.trunc(np.float32(v)))
        clamp = lambda lo, hi: min(max(t, lo), hi)     # noqa: E731
        assert row[0] == clamp(-2**15, 2**15 - 1) & M32, v
        assert row[1] == clamp(0, 2**16 - 1), v
        assert row[2] == clamp(-2**7, 2**7 - 1) & M32, v
        assert row[4] << 32 | row[3] == clamp(-2**63, 2**63 - 1) & M64, v
        assert row[6] << 32 | row[5] == clamp(0, 2**64 - 1), v


def test_an_imad_wide_the_checker_cannot_read_is_refused_by_name():
    # the control-code checker reads IMAD.WIDE's operands; a form it does not know is a
    # SimulationFault naming the instruction, not a ValueError from unpacking
    ins = parse_line(0x40, "IMAD.WIDE.U32 R10, R3, R3", 0)
    with pytest.raises(Unmodeled) as caught:
        Checker("kernel k", "SM86").issue(ins)
    assert isinstance(caught.value, SimulationFault)
    assert "kernel k: instruction at 0x0040 (IMAD.WIDE.U32 R10, R3, R3)" in caught.value.message
    assert "IMAD.WIDE.U32 with 3 operands is not modeled" in caught.value.message
