"""The simulator's integer forms probe s45 simint found refused or wrong, on kernels ptxas compiled from PTX
(ptx_kernels.compile_ptx), each output word held to the PTX ISA's definition computed here in Python integers;
control-code checker on.  Thread i reads %a = A[i], %b = B[i], %c = C[i]."""
from __future__ import annotations

import numpy as np
import pytest

from tests.sim.test_integer_semantics import _ptx, _run  # (thread i's A[i], B[i], C[i] -> out[i, :])

TARGETS = pytest.mark.parametrize("target", ["sm_86", "sm_90"])
M32, M64 = (1 << 32) - 1, (1 << 64) - 1


def _bfind_signed(x: int, bits: int) -> int:
    """PTX bfind.s<bits>: the position of the most significant bit that differs from the sign bit (of ~x for a
    negative x), 0xffffffff when there is none (0 and -1)."""
    if x >> (bits - 1):
        x = ~x & ((1 << bits) - 1)
    return x.bit_length() - 1 if x else M32


WORDS = [0, 1, M32, 0x80000000, 0x7FFFFFFF, 0xFFFFFFFE, 0x00010000, 0xDEADBEEF, 0x12345678, 0xFFFF8000]


@TARGETS
def test_a_complemented_flo_source(target):
    # bfind.s64 / bfind.shiftamt.s64: ptxas writes FLO.U32 R9, ~R2 and FLO.U32.SH R2, ~R2 (the high word of a
    # negative value complemented); clz.b32 / bfind.u32 of a not.b32: FLO.U32 R9, ~R2.  Refused before s45.
    lo = WORDS
    hi = [M32, 0, M32, 0xFFFFFFFE, 0x80000000, 1, 0x7FFFFFFF, 0xDEADBEEF, 0, M32]
    out = _run(target, """  mov.b64 %w1, {%a, %b}; bfind.s64 %o0, %w1; bfind.shiftamt.s64 %o1, %w1;
  not.b32 %r1, %a; clz.b32 %o2, %r1; bfind.u32 %o3, %r1;""", 4, lo, hi)
    for row, x, y in zip(out, lo, hi):
        position = _bfind_signed(y << 32 | x, 64)
        inverted = ~x & M32
        assert row == [position, M32 if position == M32 else 63 - position, 32 - inverted.bit_length(),
                       inverted.bit_length() - 1 if inverted else M32], (hex(x), hex(y))


def _binary16(v: int, mode: str) -> int:
    """IEEE 754's binary16 bits of the integer v rounded once by `mode` (rn: to nearest even, rz, rm, rp); past the
    largest finite value, 65504, an infinity or 65504 as the mode's direction says (IEEE 754-2008 7.4)."""
    sign, m = (0x8000 if v < 0 else 0), abs(v)
    if m == 0:
        return 0
    drop = max(m.bit_length() - 11, 0)
    q, r = divmod(m, 1 << drop)
    half = (1 << drop) >> 1
    up = {"rn": r > half or (r == half and drop > 0 and q & 1 == 1), "rz": False,
          "rm": r != 0 and sign != 0, "rp": r != 0 and sign == 0}[mode]
    q += up
    if q >> 11:
        q, drop = q >> 1, drop + 1
    exponent = q.bit_length() - 1 + drop
    if exponent > 15:
        toward_infinity = mode == "rn" or (mode == "rp" and sign == 0) or (mode == "rm" and sign != 0)
        return sign | (0x7C00 if toward_infinity else 0x7BFF)
    return sign | (exponent + 15) << 10 | (q << (10 - (q.bit_length() - 1))) & 0x3FF


@TARGETS
def test_64_bit_integers_round_once_to_binary16(target):
    # cvt.{rn,rz,rm,rp}.f16.{s64,u64}: I2F.F16.S64 / .U64 (refused before s45); the high half of the 16-bit
    # register's word is ptxas's, not read
    values = [0, 1, -1, 2049, 2051, -2051, 65504, 65505, 65519, 65520, 65535, 65536, -65520, -65519, 2**63 - 1,
              -2**63, 2**40 + 2**29 + 1, -(2**40 + 2**29), 0x7FF, 0xFFF]
    bits = [v & M64 for v in values]
    modes = ["rn", "rz", "rm", "rp"]
    body = "  mov.b64 %w1, {%a, %b};\n" + "\n".join(
        f"  cvt.{m}.f16.s64 %h{k}, %w1; cvt.u32.u16 %o{k}, %h{k};\n"
        f"  cvt.{m}.f16.u64 %h{k + 4}, %w1; cvt.u32.u16 %o{k + 4}, %h{k + 4};" for k, m in enumerate(modes))
    out = _run(target, body, 8, [v & M32 for v in bits], [v >> 32 for v in bits])
    for row, v, u in zip(out, values, bits):
        assert row == [_binary16(v, m) for m in modes] + [_binary16(u, m) for m in modes], v


def _pack(a: int, b: int, c: int, kind: str) -> int:
    """PTX cvt.pack.sat.<kind>.s32[.b32] d, a, b[, c]: a and b (signed words) clamped to kind's range, b's field
    lowest, a's above it; to 16 bits that is all, else c << (2 * width) fills the rest (the ISA's pseudocode)."""
    width, signed = int(kind[1:]), kind[0] == "s"
    low, high = (-(1 << width - 1), (1 << width - 1) - 1) if signed else (0, (1 << width) - 1)
    field = (1 << width) - 1
    sa, sb = (min(max(x - (1 << 32) if x >> 31 else x, low), high) & field for x in (a, b))
    return (sa << width | sb | (0 if width == 16 else c << 2 * width)) & M32


PACK_KINDS = ["s16", "u16", "s8", "u8", "s4", "u4", "s2", "u2"]
PACK_BODY = "\n".join(f"  cvt.pack.sat.{k}.s32{'' if k.endswith('16') else '.b32'} %o{i}, %a, %b"
                      f"{'' if k.endswith('16') else ', %c'};" for i, k in enumerate(PACK_KINDS))
PACK_A = [0, 1, M32, 0x7FFFFFFF, 0x80000000, 127, 128, 0xFFFFFF80, 0xFFFFFF7F, 255, 256, 7, 8, 0xFFFFFFF8, 1, 2,
          0xFFFFFFFE, 0x7FFF, 0x8000, 0xFFFF8000, 0xFFFF7FFF, 0xFFFF, 0x10000, 0x12345678, 0xDEADBEEF, 3, 15, 16,
          0xFFFFFFF7, 0xFFFFFFFD, 0x40, 0x7F]
PACK_B = PACK_A[7:] + PACK_A[:7]
PACK_C = [0xDEADBEEF, M32, 0, 0x12345678, 0x80000001, 0x0000FFFF, 0xFFFF0000, 0x0F0F0F0F] * 4


@TARGETS
def test_cvt_pack_sat(target):
    # I2IP.S16.S32.SAT R11, R2, R5, RZ; I2IP.S8.S32.SAT R15, R2, R5, R6; I2IP.S4.S32.SAT R19, R2, R5, R6.24;
    # I2IP.S2.S32.SAT R3, R2, R5, R6.28 (and the .U forms): refused before s45
    out = _run(target, PACK_BODY, len(PACK_KINDS), PACK_A, PACK_B, PACK_C)
    for row, a, b, c in zip(out, PACK_A, PACK_B, PACK_C):
        assert row == [_pack(a, b, c, k) for k in PACK_KINDS], (hex(a), hex(b), hex(c))



def _round_integer(x: float, mode: str) -> int:
    """x (finite) to an integer: rni to nearest even, rzi toward zero, rmi down, rpi up (PTX cvt's integer roundings)."""
    import math
    if mode == "rni":
        low = math.floor(x)
        return low + 1 if x - low > 0.5 or (x - low == 0.5 and low % 2) else low
    return {"rzi": math.trunc, "rmi": math.floor, "rpi": math.ceil}[mode](x)


HALF_RANGES = {"s32": (-2**31, 2**31 - 1), "u32": (0, M32), "s16": (-2**15, 2**15 - 1), "u8": (0, 255),
               "s64": (-2**63, 2**63 - 1), "u64": (0, M64)}
# binary16 words: +-0, +-1, +-0.5, 1.5, 2.5, +-2.75, the largest (65504), +-inf, a NaN (quiet, signalling: only to
# 32 bits and fewer, where PTX fixes NaN -> 0), the smallest subnormal, 255.9 / 256 / -128.5 / 32767 region; the
# high half holds junk, which F2I.F16 must not read
HALF_WORDS = [0x0000, 0x8000, 0x3C00, 0xBC00, 0x3800, 0xB800, 0x3E00, 0x4100, 0x4180, 0xC180, 0x7BFF, 0xFBFF,
              0x7C00, 0xFC00, 0x0001, 0x8001, 0x5BFF, 0x5C00, 0xD804, 0x77FF, 0x7800, 0xF800, 0x57FF, 0x5800]
HALF_NANS = [0x7E00, 0xFD01]


def _half_case(fmt: str, kinds: list[str], words: list[int]):
    """PTX body, expected rows: each word's fmt value converted to each kind by each rounding, saturated."""
    body, expected_fields = ["  cvt.u16.u32 %h1, %a;"], []
    k = 0
    for kind in kinds:
        for mode in ("rni", "rzi", "rmi", "rpi"):
            if kind.endswith("64"):
                body.append(f"  cvt.{mode}.{kind}.{fmt} %w1, %h1; mov.b64 {{%o{k}, %o{k + 1}}}, %w1;")
                k += 2
            elif kind.endswith("32"):
                body.append(f"  cvt.{mode}.{kind}.{fmt} %o{k}, %h1;")
                k += 1
            else:
                body.append(f"  cvt.{mode}.{kind}.{fmt} %h2, %h1; cvt.{kind[0]}32.{kind} %o{k}, %h2;")
                k += 1
            expected_fields.append((kind, mode))
    rows = []
    for word in words:
        if fmt == "f16":
            x = float(np.array([word], np.uint16).view(np.float16)[0])
        else:
            x = float(np.array([word << 16], np.uint32).view(np.float32)[0])
        row = []
        for kind, mode in expected_fields:
            low, high = HALF_RANGES[kind]
            value = 0 if x != x else low if x == float("-inf") else high if x == float("inf") else \
                min(max(_round_integer(x, mode), low), high)
            row += [value & M32, (value >> 32) & M32] if kind.endswith("64") else [value & M32]
        rows.append(row)
    return "\n".join(body), k, rows


@TARGETS
def test_binary16_to_integer_reads_the_low_half(target):
    # F2I.F16.TRUNC.NTZ R7, R2 / F2I.U8.F16.FLOOR.NTZ / F2I.S64.F16.CEIL ...: the simulator read R2 as a binary32, so
    # cvt.rzi.s32.f16 of 1.0 stored 0 (probe s45 simint)
    words = [w | 0xABCD0000 for w in HALF_WORDS]
    body, outputs, rows = _half_case("f16", ["s32", "u32", "s16", "u8", "s64", "u64"], HALF_WORDS)
    assert _run(target, body, outputs, words) == rows
    body, outputs, rows = _half_case("f16", ["s32", "u32", "s16", "u8"], HALF_NANS)
    assert _run(target, body, outputs, HALF_NANS) == rows


BF16_WORDS = [0x0000, 0x8000, 0x3F80, 0xBFC0, 0x3F00, 0x4020, 0x4F00, 0xCF00, 0x4F80, 0x5F00, 0x5F80, 0xDF00,
              0x7F7F, 0x7F80, 0xFF80, 0x0001, 0x437F, 0xC301]


def test_bfloat16_to_integer_reads_the_low_half():
    # sm_90's F2I.BF16.TRUNC.NTZ R7, R2 (cvt.rzi.s32.bf16): read as binary32 before s45
    words = [w | 0x12340000 for w in BF16_WORDS]
    body, outputs, rows = _half_case("bf16", ["s32", "u32", "s64"], BF16_WORDS)
    assert _run("sm_90", body.replace("mov.b64", "mov.b64"), outputs, words) == rows



def _tdiv(x: int, k: int) -> int:
    """PTX div.s64: the quotient truncated toward zero."""
    q = abs(x) // abs(k)
    return q if (x < 0) == (k < 0) else -q


HIGH_WORD_DIVISORS = [1 << 32, 3 << 32, 0xDEAD << 32, -(1 << 32), -(1 << 63), -(5 << 32)]
DIVIDEND_LO = [0, 1, M32, 0x80000000, 0x1027C4D1, 0xDEADBEEF, 7, 0x12345678]
DIVIDEND_HI = [0, 0, M32, 0x7FFFFFFF, 0x815A47C5, 0x80000000, 0xFFFFFFFB, 0x12345678]


def _division_case(k: int):
    body = (f"  mov.b64 %w1, {{%a, %b}}; div.s64 %w2, %w1, {k}; rem.s64 %w3, %w1, {k}; div.u64 %w4, %w1, {k & M64};\n"
            f"  rem.u64 %w5, %w1, {k & M64}; mov.b64 {{%o0, %o1}}, %w2; mov.b64 {{%o2, %o3}}, %w3;\n"
            "  mov.b64 {%o4, %o5}, %w4; mov.b64 {%o6, %o7}, %w5;")
    rows = []
    for lo, hi in zip(DIVIDEND_LO, DIVIDEND_HI):
        u = hi << 32 | lo
        x = u - (1 << 64) if hi >> 31 else u
        q = _tdiv(x, k)
        row = []
        for v in (q, x - q * k, u // (k & M64), u % (k & M64)):
            row += [v & M32, (v >> 32) & M32]
        rows.append(row)
    return body, rows


@TARGETS
@pytest.mark.parametrize("k", HIGH_WORD_DIVISORS)
def test_64_bit_division_by_a_constant_with_a_zero_low_word(target, k):
    # ptxas converts such a divisor with `I2F.U64.RP R10, 0x1` (2^32: the immediate is the high word); the simulator
    # read the immediate zero-extended (1.0) and stored garbage quotients and remainders (probe s45 simint)
    body, rows = _division_case(k)
    assert _run(target, body, 8, DIVIDEND_LO, DIVIDEND_HI) == rows


def sm90_cases() -> dict:
    """name -> (PTX for sm_90, (A, B, C) words, the expected out rows): the kernels above whose SASS the simulator
    reads from ptxas's code and the ISA's definition, not from a GPU's run, for tests/gpu/test_sim_probes_gpu.py
    (ptxas's cubins by tests/gpu/prepare.sh).  I2IP's merge source suffixes (`R6.24` / `R6.28`) are nvdisasm's; what
    the GPU does with them is settled by that run."""
    out = {"s45_cvt_pack": (_ptx(PACK_BODY, len(PACK_KINDS)).replace(".target sm_86", ".target sm_90"),
                            (PACK_A, PACK_B, PACK_C),
                            [[_pack(a, b, c, k) for k in PACK_KINDS] for a, b, c in zip(PACK_A, PACK_B, PACK_C)])}
    # F2I.F16 / .BF16 (below): NaN operands only to 32 bits and fewer, where PTX fixes the result (0)
    for name, fmt, kinds, words, junk in (
            ("s45_f16_to_int", "f16", ["s32", "u32", "s16", "u8", "s64", "u64"], HALF_WORDS, 0xABCD0000),
            ("s45_f16_nan_to_int", "f16", ["s32", "u32", "s16", "u8"], HALF_NANS, 0),
            ("s45_bf16_to_int", "bf16", ["s32", "u32", "s64"], BF16_WORDS, 0x12340000)):
        body, outputs, rows = _half_case(fmt, kinds, words)
        zeros = [0] * len(words)
        out[name] = (_ptx(body, outputs).replace(".target sm_86", ".target sm_90"),
                     ([w | junk for w in words], zeros, zeros), rows)
    for k in (1 << 32, -(1 << 63), 0xDEAD << 32):
        body, rows = _division_case(k)
        out[f"s45_div_by_{k & M64:x}"] = (_ptx(body, 8).replace(".target sm_86", ".target sm_90"),
                                           (DIVIDEND_LO, DIVIDEND_HI, [0] * len(DIVIDEND_LO)), rows)
    return out
