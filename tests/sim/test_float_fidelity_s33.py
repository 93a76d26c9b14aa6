"""The simulator's binary32 / binary16 instructions and warp-convergence branches against the PTX ISA's
semantics of the PTX ptxas compiled them from, computed here in plain Python (integer arithmetic and
math, not the simulator's helpers): float immediates nvdisasm prints as integers (FSEL's `1`, `-126`),
min/max with .NaN and two NaNs (the canonical NaN), atom.add.f32's flush to zero, sin.approx /
cos.approx (FMUL.RZ, then MUFU.SIN / COS) within their documented error, mul.rz/rm/rp, and BRA.DIV /
BRA.CONV before a vote or shuffle whose membermask is the lanes of a branch.  Probe s33 simfidelity,
findings 3, 8, 9, 11, 12."""
from __future__ import annotations

import math
import struct
import sys
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
from ptx_kernels import compile_ptx  # noqa: E402

from bobc.sim.faults import Unmodeled  # noqa: E402
from bobc.sim.kernel import run_kernel  # noqa: E402

TARGETS = pytest.mark.parametrize("target", ["sm_86", "sm_90"])


def _ptx(body: str, outputs: int) -> str:
    """Thread i: %a/%b/%c = A[i]/B[i]/C[i] (.b32; %fa/%fb/%fc the same bits as .f32), %rd2 = &B[i];
    the body writes %o0..%o{outputs-1}, stored to out[i, :]."""
    stores = "\n".join(f"  st.global.b32 [%rd5+{4 * k}], %o{k};" for k in range(outputs))
    return f""".version 8.0
.target sm_86
.address_size 64
.visible .entry k(.param .u64 out, .param .u64 A, .param .u64 B, .param .u64 C)
{{
  .reg .b32 %a, %b, %c, %t<8>, %o<{outputs}>, %i; .reg .b64 %rd<8>; .reg .pred %p<8>;
  .reg .f32 %fa, %fb, %fc, %f<8>; .reg .f64 %d<4>;
  mov.u32 %i, %tid.x;
  ld.param.u64 %rd1, [A]; ld.param.u64 %rd2, [B]; ld.param.u64 %rd3, [C]; ld.param.u64 %rd4, [out];
  mul.wide.u32 %rd6, %i, 4;
  add.s64 %rd1, %rd1, %rd6; add.s64 %rd2, %rd2, %rd6; add.s64 %rd3, %rd3, %rd6;
  ld.global.b32 %a, [%rd1]; ld.global.b32 %b, [%rd2]; ld.global.b32 %c, [%rd3];
  mov.b32 %fa, %a; mov.b32 %fb, %b; mov.b32 %fc, %c;
  mul.wide.u32 %rd6, %i, {4 * outputs};
  add.s64 %rd5, %rd4, %rd6;
{body}
{stores}
  ret;
}}
"""


def _run(target, body, outputs, a, b=None, c=None):
    a = np.asarray(a, np.uint32)
    n = a.size
    b = np.zeros(n, np.uint32) if b is None else np.asarray(b, np.uint32)
    c = np.zeros(n, np.uint32) if c is None else np.asarray(c, np.uint32)
    return run_kernel(compile_ptx(_ptx(body, outputs), target), target, grid=1, block=n,
                      params=["out", "A", "B", "C"],
                      buffers={"out": np.zeros((n, outputs), np.uint32), "A": a, "B": b, "C": c})


def bits(x: float) -> int:
    return struct.unpack("<I", struct.pack("<f", x))[0]


def value(word: int) -> float:
    return struct.unpack("<f", struct.pack("<I", int(word)))[0]


def is_nan(word: int) -> bool:
    return (word & 0x7F800000) == 0x7F800000 and (word & 0x7FFFFF) != 0


def half_is_nan(h: int) -> bool:
    return (h & 0x7C00) == 0x7C00 and (h & 0x3FF) != 0


def half_value(h: int) -> Fraction:
    """A binary16 number's exact value (not NaN / inf)."""
    sign, exponent, fraction = -1 if h >> 15 else 1, (h >> 10) & 0x1F, h & 0x3FF
    if exponent == 0:
        return sign * Fraction(fraction, 1 << 24)
    return sign * Fraction(0x400 | fraction, 1 << 10) * Fraction(2) ** (exponent - 15)


def round_binary32(x: Fraction, mode: str) -> int:
    """The binary32 bits of the exact value x rounded toward zero (RZ), down (RM) or up (RP): integer
    arithmetic on the significand (IEEE 754 directed rounding, subnormals and overflow included)."""
    if x == 0:
        return 0
    sign = x < 0
    m = -x if sign else x
    exponent = max(math.floor(math.log2(m.numerator) - math.log2(m.denominator)), -126)
    while Fraction(2) ** exponent > m and exponent > -126:      # log2 of a ratio may be off by one
        exponent -= 1
    while Fraction(2) ** (exponent + 1) <= m:
        exponent += 1
    unit = Fraction(2) ** (exponent - 23)                       # the binary32 spacing at m
    q = m // unit
    inexact = q * unit != m
    away = mode == "RP" and not sign or mode == "RM" and sign   # rounding increases the magnitude
    if inexact and away:
        q += 1
    magnitude = q * unit
    biggest = (2 - Fraction(2) ** -23) * Fraction(2) ** 127
    if magnitude > biggest:
        word = 0x7F800000 if away else bits(float(biggest))
    else:
        word = bits(float(magnitude))                          # exact: magnitude is a binary32 number
    return word | (0x80000000 if sign else 0)


# ---------------------------------------------------------------- finding 3: float immediates
@TARGETS
def test_float_immediates_nvdisasm_prints_as_integers_are_binary32_numbers(target):
    """selp.f32 d, 1.0, x, p is FSEL R, R, 1, !P0 (and -126.0 prints `-126`); selp.f64's 2.0 selects a
    high word nvdisasm prints as the float `2`; rcp.approx.f32 scales its input through FSEL ..., 1 /
    0.25.  PTX: selp picks the value; rcp.approx.f32's maximum error is 1 ulp."""
    x = [0.5, -3.0, 100.0, 7.25]
    out = _run(target, """  setp.gt.f32 %p1, %fa, 0f00000000;
  selp.f32 %f1, 0f3F800000, %fa, %p1; mov.b32 %o0, %f1;
  selp.f32 %f2, 0fC2FC0000, %fa, %p1; mov.b32 %o1, %f2;
  rcp.approx.f32 %f3, %fa; mov.b32 %o2, %f3;
  cvt.f64.f32 %d1, %fa; selp.f64 %d2, 0d4000000000000000, %d1, %p1; mov.b64 {%o3, %o4}, %d2;
  max.f32 %f4, %fa, 0f41000000; mov.b32 %o5, %f4;""", 6, [bits(v) for v in x])["out"]
    for row, v in zip(out, x):
        assert int(row[0]) == bits(1.0 if v > 0 else v), v
        assert int(row[1]) == bits(-126.0 if v > 0 else v), v
        reciprocal = Fraction(1) / Fraction(v)
        ulp = Fraction(2) ** (math.floor(math.log2(abs(float(reciprocal)))) - 23)
        assert abs(Fraction(value(row[2])) - reciprocal) <= ulp, v
        double = struct.unpack("<d", struct.pack("<II", int(row[3]), int(row[4])))[0]
        assert double == (2.0 if v > 0 else v), v
        assert value(row[5]) == max(v, 8.0), v


# ---------------------------------------------------------------- finding 8: min/max NaN
CANONICAL_NAN = 0x7FFFFFFF


def _ptx_min_max(a: int, b: int, take_min: bool, nan_modifier: bool) -> int:
    """PTX min/max (.f32): a NaN input gives the other; both NaN, or either with .NaN, the
    canonical NaN; else the smaller / larger number (+0.0 > -0.0)."""
    if is_nan(a) and is_nan(b) or nan_modifier and (is_nan(a) or is_nan(b)):
        return CANONICAL_NAN
    if is_nan(a):
        return b
    if is_nan(b):
        return a
    key = lambda w: (value(w), 0 if w >> 31 else 1)
    return min(a, b, key=key) if take_min else max(a, b, key=key)


def _ptx_min_half(a: int, b: int, nan_modifier: bool) -> int:
    if half_is_nan(a) and half_is_nan(b) or nan_modifier and (half_is_nan(a) or half_is_nan(b)):
        return 0x7FFF
    if half_is_nan(a):
        return b
    if half_is_nan(b):
        return a
    return min(a, b, key=lambda h: (half_value(h), 0 if h >> 15 else 1))


@TARGETS
def test_min_max_nan_give_the_canonical_nan(target):
    """min.NaN / max.NaN (FMNMX.NAN), min.NaN.f16x2 (HMNMX2.NAN) and plain min/max of two NaNs."""
    a = [bits(1.0), bits(2.0), 0xFFC00055, 0x7FC00000, bits(-4.0), 0x3C007E00]
    b = [0x7FC00000, bits(1.0), 0x7FC00123, bits(-5.0), 0xFF800001, 0x7C01BC00]
    out = _run(target, """  min.NaN.f32 %f1, %fa, %fb; mov.b32 %o0, %f1;
  max.NaN.f32 %f2, %fa, %fb; mov.b32 %o1, %f2;
  min.f32 %f3, %fa, %fb; mov.b32 %o2, %f3;
  max.f32 %f4, %fa, %fb; mov.b32 %o3, %f4;
  min.NaN.f16x2 %o4, %a, %b;
  min.f16x2 %o5, %a, %b;""", 6, a, b)["out"]
    for row, x, y in zip(out, a, b):
        where = f"a={x:#010x} b={y:#010x}"
        assert int(row[0]) == _ptx_min_max(x, y, True, True), where
        assert int(row[1]) == _ptx_min_max(x, y, False, True), where
        assert int(row[2]) == _ptx_min_max(x, y, True, False), where
        assert int(row[3]) == _ptx_min_max(x, y, False, False), where
        for column, nan_modifier in ((4, True), (5, False)):
            expected = _ptx_min_half(x & 0xFFFF, y & 0xFFFF, nan_modifier) | \
                _ptx_min_half(x >> 16, y >> 16, nan_modifier) << 16
            assert int(row[column]) == expected, f"{where} column {column}: {int(row[column]):#010x}"


# ---------------------------------------------------------------- finding 9: atom.add.f32 FTZ
def _flush(x: float) -> float:
    return math.copysign(0.0, x) if x != 0 and abs(x) < 2.0 ** -126 else x


@TARGETS
def test_global_atomic_float_add_flushes_subnormals(target):
    """atom.global.add.f32 and red.global.add.f32 (ATOMG / RED .ADD.F32.FTZ.RN): PTX "rounds to
    nearest even and flushes subnormal inputs and results to sign-preserving zero"."""
    memory = [1e-39, 0.0, 1.0, -2.0 ** -125, 2.0 ** -126, 3.0]
    addend = [1e-40, 3e-39, 2.0 ** -130, 2.0 ** -127, -2.0 ** -127, 0.5]
    m = [bits(v) for v in memory]
    d = [bits(v) for v in addend]
    for op in ("atom.global.add.f32 %f1, [%rd2], %fa; mov.b32 %o0, %f1;",
               "red.global.add.f32 [%rd2], %fa; mov.b32 %o0, 0;"):
        after = _run(target, "  " + op, 1, d, m)["B"]
        for k, (old, add) in enumerate(zip(memory, addend)):
            total = np.float32(_flush(value(bits(old))) + _flush(value(bits(add))))   # one rounding: exact sums here
            expected = bits(_flush(float(total)))
            assert int(after[k]) == expected, f"{op.split()[0]}: {old!r} + {add!r} gave {value(after[k])!r}"


# ---------------------------------------------------------------- finding 11: FMUL.RZ, sin/cos
@TARGETS
def test_sin_cos_approx_within_the_documented_error(target):
    """sin.approx.f32 / cos.approx.f32 (CUDA's __sinf / __cosf: FMUL.RZ by 1/(2 pi), MUFU.SIN / COS):
    PTX ISA's maximum absolute error, 2^-20.5 over [-2 pi, 2 pi] and 2^-14.7 over [-100 pi, 100 pi],
    and its special values (+-0 -> +-0 / 1, +-inf and NaN -> NaN)."""
    near = np.linspace(-2 * np.pi, 2 * np.pi, 96).astype(np.float32)
    far = np.linspace(-100 * np.pi, 100 * np.pi, 96).astype(np.float32)
    special = [0.0, -0.0, math.inf, -math.inf, math.nan, 1e-30, 2.0 ** -140, 3.0]
    x = [float(v) for v in near] + [float(v) for v in far] + special
    out = _run(target, """  sin.approx.f32 %f1, %fa; mov.b32 %o0, %f1;
  cos.approx.f32 %f2, %fa; mov.b32 %o1, %f2;
  sin.approx.ftz.f32 %f3, %fa; mov.b32 %o2, %f3;""", 3, [bits(v) if not math.isnan(v) else 0x7FC00000 for v in x])["out"]
    for k, v in enumerate(x):
        s, c, s_ftz = (value(w) for w in out[k])
        if math.isinf(v) or math.isnan(v):
            assert math.isnan(s) and math.isnan(c) and math.isnan(s_ftz), v
            continue
        if v == 0:
            assert bits(s) == bits(v) and c == 1.0, v
            continue
        bound = 2 ** -20.5 if abs(v) <= 2 * math.pi else 2 ** -14.7
        assert abs(s - math.sin(v)) <= bound, (v, s, math.sin(v))
        assert abs(c - math.cos(v)) <= bound, (v, c, math.cos(v))
        assert abs(s_ftz - math.sin(_flush(v))) <= bound, v


@TARGETS
def test_directed_rounding_multiplies_round_the_exact_product(target):
    """mul.rz / mul.rm / mul.rp .f32 (FMUL.RZ / .RM / .RP): the exact product rounded once in the mode,
    subnormal and overflowing products included."""
    rng = np.random.default_rng(33)
    a = [float(v) for v in rng.uniform(-4, 4, 24).astype(np.float32)] + [3e38, -3e38, 1e-20, 1.5, -1.0000001]
    b = [float(v) for v in rng.uniform(-4, 4, 24).astype(np.float32)] + [4.0, 4.0, -1e-20, 2.0 ** -130, 3.0]
    out = _run(target, """  mul.rz.f32 %f1, %fa, %fb; mov.b32 %o0, %f1;
  mul.rm.f32 %f2, %fa, %fb; mov.b32 %o1, %f2;
  mul.rp.f32 %f3, %fa, %fb; mov.b32 %o2, %f3;""", 3, [bits(v) for v in a], [bits(v) for v in b])["out"]
    for row, x, y in zip(out, a, b):
        exact = Fraction(value(bits(x))) * Fraction(value(bits(y)))
        for column, mode in enumerate(("RZ", "RM", "RP")):
            assert int(row[column]) == round_binary32(exact, mode), f"{x!r} * {y!r} {mode}: {value(row[column])!r}"


# ---------------------------------------------------------------- finding 12: BRA.DIV / BRA.CONV
@TARGETS
def test_a_collective_on_the_lanes_of_a_branch_runs_past_its_convergence_check(target):
    """Lanes 0..15 branch and run vote.sync.ballot / shfl.sync.bfly with membermask 0x0000ffff, exactly
    the lanes there: ptxas checks convergence first (BRA.DIV on sm_86's vote, BRA.CONV before the
    shuffle); the warp is converged, so the collective runs with PTX's result."""
    lane = list(range(32))
    votes = [k % 3 for k in lane]
    body = """  mov.u32 %o0, 0; mov.u32 %o1, 0;
  setp.lt.u32 %p1, %a, 16; @!%p1 bra DONE;
  setp.ne.u32 %p2, %b, 0; vote.sync.ballot.b32 %o0, %p2, 0x0000ffff;
  shfl.sync.bfly.b32 %o1, %c, 1, 0x1f, 0x0000ffff;
DONE:"""
    out = _run(target, body, 2, lane, votes, [100 + k for k in lane])["out"]
    ballot = sum(1 << k for k in range(16) if votes[k])
    for k in lane:
        assert int(out[k, 0]) == (ballot if k < 16 else 0), k
        assert int(out[k, 1]) == (100 + (k ^ 1) if k < 16 else 0), k


BOTH_SIDES = """  mov.u32 %o0, 0; setp.ne.u32 %p2, %b, 0;
  setp.lt.u32 %p1, %a, 16; @%p1 bra LA;
  vote.sync.ballot.b32 %o0, %p2, 0xffffffff; bra DONE;
LA: vote.sync.ballot.b32 %t1, %p2, 0xffffffff; add.u32 %o0, %t1, 1;
DONE:"""


@TARGETS
def test_a_full_warp_vote_inside_a_branch_the_whole_warp_takes(target):
    """Both sides of a branch run vote.sync with the full mask, so ptxas checks convergence (BRA.DIV
    ~URZ on sm_86, BRA.DIV UR6 holding 0xffffffff on sm_90); every lane goes the same way, so the warp
    is converged there and the ballot is PTX's (plus 1 on the side that adds it)."""
    lane = list(range(32))
    votes = [k % 3 for k in lane]
    ballot = sum(1 << k for k in lane if votes[k])
    for side, a in ((0, [k + 16 for k in lane]), (1, [0] * 32)):
        out = _run(target, BOTH_SIDES, 1, a, votes)["out"]
        assert [int(v) for v in out[:, 0]] == [ballot + side] * 32, side


@TARGETS
def test_a_collective_the_warp_reaches_diverged_is_refused_at_its_check(target):
    """BOTH_SIDES with lanes 0..15 on one side, 16..31 on the other (legal since sm_70: the GPU joins
    them): at the convergence check the warp holds half its lanes, so ptxas's divergent path would run:
    refused there, naming BRA.DIV, the lanes and the mask."""
    lane = list(range(32))
    with pytest.raises(Unmodeled) as caught:
        _run(target, BOTH_SIDES, 1, lane, lane)
    message = str(caught.value)
    assert "BRA.DIV" in message and "not converged" in message, message
    assert "0xffffffff" in message and ("0x0000ffff" in message or "0xffff0000" in message), message
