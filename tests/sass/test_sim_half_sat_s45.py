"""binary16 .SAT of a -0 result (HADD2.SAT / HFMA2.SAT / sm_90 HFMA2.MMA.SAT / HMUL2.SAT), as probe kernels the GPU run
settles (tests/gpu/test_sim_probes_gpu.py, test_s45_half_sat_matches_the_simulator).

The PTX ISA's .sat "clamps the result to [0.0, 1.0]" and makes a NaN +0; which zero a -0 result becomes it does not
say.  The H200 stored +0 for add.rm.sat.f32's -0 sums (session 45's run), and the simulator's FADD.SAT now does so;
its binary16 paths (executor._half_result) clamp with NumPy's clip, which keeps -0 -- and clamp the exact value
before rounding it to binary16, so a negative value that rounds to -0 is +0 there.  These kernels hold the
simulator to the GPU: session 45's run on an H100 stored +0 for every -0 result of these forms (54 halves,
tests/gpu/logs/2026-12-07-s45-h100-nan_bits.log), where the simulator's clip had kept -0; it now stores +0, and the
GPU test fails, printing the GPU's words beside the simulator's, wherever they differ.

PTX allows only .rn on add / sub / mul / fma .f16 / .f16x2 (ptxas: "Illegal rounding modifier for instruction
'add'" for add.rm.sat.f16, likewise fma.rm.sat.f16x2), so x + -x is +0 here; the -0 results come from -0 + -0,
-0 - +0, a -0 product (-0 * x, or a negative product that underflows) plus -0, and fma(x, y, -x * y) exact.

The oracle is this file's, independent of bobc.sim: the exact result (fractions.Fraction; an exact zero's sign by
IEEE 754 6.3: x + -x is +0 rounding to nearest, -0 + -0 is -0, a product's zero the XOR of the signs), then the
clamp the GPU showed (NaN and -0 +0, below zero +0, above one 1), then rounded to nearest even
onto binary16's values (tests/sass/test_sim_roundings_s44.narrow)."""
from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest

from tests.sass.test_sim_roundings_s44 import kernel, narrow, run, same, widen

ARCHES = ("sm_86", "sm_90")
H = "mov.b32 {%h1, %h2}, %r2; mov.b32 {%h3, %h4}, %r3; mov.b32 {%h5, %h6}, %r4; "
# name: (PTX on a = %r2, b = %r3, c = %r4 -> %r10, operation, halves)
FORMS = {
    "add_sat_f16": (H + "add.sat.f16 %h7, %h1, %h3; cvt.u32.u16 %r10, %h7;", "add", 1),
    "add_sat_f16x2": ("add.sat.f16x2 %r10, %r2, %r3;", "add", 2),
    "sub_sat_f16x2": ("sub.sat.f16x2 %r10, %r2, %r3;", "sub", 2),
    "mul_sat_f16x2": ("mul.sat.f16x2 %r10, %r2, %r3;", "mul", 2),
    "fma_sat_f16": (H + "fma.rn.sat.f16 %h7, %h1, %h3, %h5; cvt.u32.u16 %r10, %h7;", "fma", 1),
    "fma_sat_f16x2": ("fma.rn.sat.f16x2 %r10, %r2, %r3, %r4;", "fma", 2),
}


def _sign(x: float) -> int:
    return -1 if math.copysign(1.0, x) < 0 else 1


def _exact(op: str, a: float, b: float, c: float):
    """The exact result: a float (NaN, an infinity or a signed zero) or a nonzero Fraction."""
    if op == "sub":
        op, b = "add", -b
    if op == "mul":
        op, c = "fma", -0.0                           # a * b is a * b + -0, its zero's sign included
    if op == "add":
        op, a, b, c = "fma", 1.0, a, b                # 1 * a + b
    if not all(math.isfinite(v) for v in (a, b, c)):
        with np.errstate(all="ignore"):
            return float(np.float64(a) * np.float64(b) + np.float64(c))
    product = Fraction(a) * Fraction(b)
    total = product + Fraction(c)
    if total != 0:
        return total
    if product == 0 and c == 0:
        p_sign = _sign(a) * _sign(b)
        return -0.0 if p_sign < 0 and _sign(c) < 0 else 0.0
    return 0.0                                        # an exact cancellation rounding to nearest: +0


def saturated(op: str, a_bits: int, b_bits: int, c_bits: int) -> int:
    """The binary16 bits .SAT stores: NaN +0, -0 +0 (the H100, session 45), below zero +0, above one 1,
    the exact value clamped first, then rounded to nearest even."""
    v = _exact(op, *(widen(x, "f16") for x in (a_bits, b_bits, c_bits)))
    if isinstance(v, float):
        if math.isnan(v):
            return 0x0000
        if v == 0:
            return 0x0000                             # -0 too: the H100's words (session 45's GPU run)
        return 0x3C00 if v > 0 else 0x0000
    if v < 0:
        return 0x0000
    if v > 1:
        return 0x3C00
    return narrow(v, "f16")


def expected(name: str, words: np.ndarray) -> list:
    _, op, halves = FORMS[name]
    out = []
    for a, b, c in zip(*(words[i].tolist() for i in range(3))):
        fields = tuple(saturated(op, a >> k & 0xFFFF, b >> k & 0xFFFF, c >> k & 0xFFFF) for k in (0, 16)[:halves])
        out.append(fields if halves == 2 else fields[0])
    return out


def operand_words(count: int = 256) -> np.ndarray:
    """[4, count]: rows of (a, b, c) halves whose results are -0 or near it, then random halves of every exponent."""
    rng = np.random.default_rng(4545)
    tiny, neg_tiny, one, neg_one = 0x0001, 0x8001, 0x3C00, 0xBC00
    rows = [  # (a, b, c) halves: each -0 case, and its neighbours
        (0x8000, 0x8000, 0x8000), (0x8000, 0x0000, 0x8000), (0x0000, 0x8000, 0x8000), (0x0000, 0x0000, 0x8000),
        (0x8000, one, 0x8000), (one, 0x8000, 0x8000), (0x8000, neg_one, 0x8000), (neg_tiny, tiny, 0x8000),
        (0x8400, 0x0400, 0x8000), (neg_tiny, 0x3800, 0x8000), (0x3E00, 0xBE00, 0x3E00), (0x4500, 0xC500, 0x0000),
        (0x3555, 0x3555, 0xB0E4), (0xB555, 0x3555, 0x30E4), (neg_tiny, 0x3400, 0x8000), (0x8200, 0x0200, 0x8000),
        (0x7C00, 0xFC00, 0x0000), (0x7E00, one, 0x0000), (0xFC00, one, 0x8000), (0x7C00, 0x0000, 0x8000),
        (one, one, 0x8000), (0x4000, one, 0x8000), (neg_tiny, neg_tiny, 0x8000), (neg_tiny, 0x8000, 0x8000),
        (0x8000, 0x8000, 0x0000), (0x3800, 0xB800, 0x8000), (neg_one, one, one), (one, neg_one, 0x8000),
        (0x8000, 0x8000, one), (0x8000, 0x8000, 0x3555), (0x8000, 0x8000, neg_one), (0x8000, 0x8000, tiny),
        (0x8000, 0x0000, one), (0x0000, 0x8000, neg_one),
    ]
    words = rng.integers(0, 1 << 32, (4, count), dtype=np.uint32)
    # sums of x and -x, -0 and +0 in both halves (x random)
    x = rng.integers(0, 0x7C00, 32, dtype=np.uint32)
    words[0, 64:96] = x | (x | 0x8000) << 16
    words[1, 64:96] = (x | 0x8000) | x << 16
    words[2, 64:96] = 0x80008000
    for i, (a, b, c) in enumerate(rows):
        # the low half as listed, the high half its (b, a) swap: a different zero order
        words[0, i] = a | b << 16
        words[1, i] = b | a << 16
        words[2, i] = c | c << 16
    # small halves of both signs (products that underflow toward -0), then in [-1, 1]
    words[:3, 96:160] = rng.integers(0, 0x1400, (3, 64), dtype=np.uint32) * np.uint32(0x10001) ^ \
        (rng.integers(0, 2, (3, 64), dtype=np.uint32) * np.uint32(0x80008000))
    words[:3, 160:224] = rng.integers(0, 0x3C01, (3, 64), dtype=np.uint32) * np.uint32(0x10001) ^ \
        (rng.integers(0, 2, (3, 64), dtype=np.uint32) * np.uint32(0x80000000))
    return words


def negative_zero_lanes(name: str, words: np.ndarray) -> list[int]:
    """The lanes where a half's exact result is -0 (the GPU run showed .SAT makes it +0)."""
    _, op, halves = FORMS[name]

    def minus_zero(a: int, b: int, c: int) -> bool:
        v = _exact(op, *(widen(x, "f16") for x in (a, b, c)))
        return isinstance(v, float) and v == 0 and _sign(v) < 0

    return [i for i, (a, b, c) in enumerate(zip(*(words[j].tolist() for j in range(3))))
            if any(minus_zero(a >> k & 0xFFFF, b >> k & 0xFFFF, c >> k & 0xFFFF) for k in (0, 16)[:halves])]


@pytest.mark.parametrize("arch", ARCHES)
@pytest.mark.parametrize("name", sorted(FORMS))
def test_half_sat_in_the_simulator(name, arch, tmp_path, needs_ptxas):
    words = operand_words()
    got = run(f"s45_{name}", arch, FORMS[name][0], words, tmp_path)
    same(got, expected(name, words), "f16", words, f"{name} ({arch})")


def test_each_kernel_has_negative_zero_lanes():
    """Every form reaches a -0 result, so the GPU run shows what .SAT makes of it."""
    words = operand_words()
    for name in FORMS:
        assert len(negative_zero_lanes(name, words)) >= 4, name


# ----------------------------------------------------------------- the GPU's (tests/gpu/test_sim_probes_gpu.py)
def sm90_cases() -> dict:
    """name -> (PTX for sm_90, input words [4, 256]): the kernels above for tests/gpu/prepare.sh (ptxas's cubin, bobc's
    where its assembler has every form -- not HMUL2.SAT, mul_sat_f16x2, yet -- and the simulator's words of ptxas's,
    NAME.sim.npy) and tests/gpu/test_sim_probes_gpu.py."""
    return {f"s45_{name}": (kernel(f"s45_{name}", "sm_90", body), operand_words())
            for name, (body, _, _) in sorted(FORMS.items())}


def gpu_faults(name: str, words: np.ndarray, got: np.ndarray, simulated: np.ndarray) -> list[str]:
    """Lines where the GPU's words differ from the simulator's (every one a fault: .SAT's result is exact), each
    half's bits and the operands' shown; the -0 lanes first."""
    zeros = set(negative_zero_lanes(name, words))
    lines = [(i not in zeros, f"  a={int(words[0, i]):08x} b={int(words[1, i]):08x} c={int(words[2, i]):08x}: "
              f"GPU {int(g):08x} simulator {int(s):08x}{' (an exact -0)' if i in zeros else ''}")
             for i, (g, s) in enumerate(zip(np.asarray(got).tolist(), np.asarray(simulated).tolist())) if g != s]
    return [line for _, line in sorted(lines, key=lambda t: t[0])]
