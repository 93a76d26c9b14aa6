"""Directed roundings and narrow conversions ptxas writes for ordinary PTX, run in the simulator bit for bit (probe
s44 simops).  Before, each was refused by name, which stopped a kernel at its first such instruction:
- add / sub .rz / .rm / .rp .f32 (FADD.RZ / .RM / .RP, "FADD.RZ (modifier RZ) is not modeled");
- cvt.rz / .rm / .rp .f16.f32 and .f16.f64 (F2FP.PACK_AB.RZ, F2F.F16.F32.RM / .RP, F2F.F16.F64.RZ);
- cvt .relu / .satfinite / .rz to .f16(x2) / .bf16(x2) (F2FP.RELU.MERGE_C, .RELU.PACK_AB, .SATFINITE.PACK_AB,
  .BF16.PACK_AB.RZ);
- sm_90's 8-bit floats: cvt.rn.satfinite(.relu).e4m3x2 / .e5m2x2 .f32 and .f16x2 (F2FP.SATFINITE.E4M3.F32.PACK_AB_MERGE_C,
  .E4M3.F16.UNPACK_B_MERGE_C) and cvt.rn.f16x2.e4m3x2 / .e5m2x2 (F2FP.F16.E4M3.UNPACK_B).

Each kernel is ptxas's -O3 cubin of a small PTX kernel (tests/sass/test_ffma_rounding_s42._kernel: a, b, c words per
thread), run with the control-code checker on.  The expected values are this file's own, independent of the
simulator's bobc.sim.formats: exact rationals (fractions.Fraction) rounded by IEEE 754 4.3's rule for the mode onto
the format's finite values, listed here from each format's definition -- binary16 as NumPy's float16 reads the bits,
bfloat16 as the binary32 whose high half the bits are, E4M3 (bias 7, no infinities, 0x7f / 0xff NaN, largest 448)
and E5M2 (bias 15, IEEE-like, largest 57344) by the OCP 8-bit floating point specification, computed by hand below.
Past the largest finite value: an infinity rounding to nearest or away from zero, else the largest (IEEE 754 7.4);
with .satfinite the largest of the sign, infinite operands too, and a NaN a NaN (PTX ISA, cvt).  .relu: a negative
result +0 (PTX: "clamps the result to 0 if negative"; -0 too, as the H100 wrote for fma.rn.relu.bf16 in session 43),
a NaN a NaN.  A NaN result need only be a NaN of the format: the PTX ISA fixes no NaN's bits (the simulator writes
0x7fff / 0x7f; tests/gpu/test_sim_probes_gpu.py records the GPU's beside them)."""
from __future__ import annotations

import bisect
import math
import subprocess
from fractions import Fraction

import numpy as np
import pytest

from bobc.nvtools import ptxas
from tests.sass.test_ffma_rounding_s42 import BLOCK, _kernel, operands, round_f32

ARCHES = ("sm_86", "sm_90")


def kernel(name: str, arch: str, body: str) -> str:
    """_kernel with 16-bit and binary64 registers: %fd1 = the binary64 b:a."""
    return _kernel(name, arch, "mov.b64 %fd1, %rd13; " + body).replace(
        ".reg .pred %p<4>;", ".reg .pred %p<4>; .reg .f64 %fd<4>; .reg .b16 %h<8>;")


def run(name: str, arch: str, body: str, words: np.ndarray, tmp_path) -> np.ndarray:
    """The first word each thread stored."""
    from bobc.sim.kernel import run_kernel
    ptx, cubin = tmp_path / f"{name}.ptx", tmp_path / f"{name}.cubin"
    ptx.write_text(kernel(name, arch, body))
    subprocess.run([ptxas(), f"-arch={arch}", "-O3", "-o", str(cubin), str(ptx)], check=True, capture_output=True)
    n = words.shape[1]
    out = run_kernel(cubin.read_bytes(), arch, grid=n // BLOCK, block=BLOCK, params=["out", "in", np.uint32(n)],
                     buffers={"out": np.zeros(2 * n, np.uint32), "in": words.astype(np.uint32).reshape(-1)},
                     kernel_name=name)["out"]
    return out.reshape(n, 2)[:, 0]


# ----------------------------------------------------------------- the formats, from their definitions
def _e4m3(bits: int) -> float:
    """OCP FP8 E4M3: bias 7; exponent 0 subnormal (m / 8 * 2^-6); S.1111.111 NaN, so 0x7e = 1.75 * 2^8 = 448."""
    e, m = bits >> 3 & 0xF, bits & 7
    return m / 8 * 2.0 ** -6 if e == 0 else (1 + m / 8) * 2.0 ** (e - 7)


def _e5m2(bits: int) -> float:
    """OCP FP8 E5M2: bias 15, IEEE 754-like (exponent 31 infinities and NaNs), so 0x7b = 1.75 * 2^15 = 57344."""
    e, m = bits >> 2 & 0x1F, bits & 3
    return m / 4 * 2.0 ** -14 if e == 0 else (1 + m / 4) * 2.0 ** (e - 15)


# name -> (bits of each nonnegative finite value, their values, the sign bit, infinity's bits or None, a NaN test)
FORMATS = {
    "f16": (range(0x7C00), np.arange(0x7C00, dtype=np.uint16).view(np.float16).astype(float).tolist(), 0x8000,
            0x7C00, lambda v: (v & 0x7C00) == 0x7C00 and v & 0x3FF != 0),
    "bf16": (range(0x7F80), (np.arange(0x7F80, dtype=np.uint32) << 16).view(np.float32).astype(float).tolist(),
             0x8000, 0x7F80, lambda v: (v & 0x7F80) == 0x7F80 and v & 0x7F != 0),
    "e4m3": (range(0x7F), [_e4m3(b) for b in range(0x7F)], 0x80, None, lambda v: v & 0x7F == 0x7F),
    "e5m2": (range(0x7C), [_e5m2(b) for b in range(0x7C)], 0x80, 0x7C, lambda v: (v & 0x7C) == 0x7C and v & 3 != 0),
}
NAN = -1


def narrow(x: float, fmt: str, mode: str = "rn", satfinite: bool = False, relu: bool = False) -> int:
    """The bits of x (a binary32 / binary64 value, exact) rounded to `fmt` by `mode`, or NAN."""
    codes, values, sign_bit, infinity, _ = FORMATS[fmt]
    if math.isnan(x):
        return NAN
    negative = math.copysign(1.0, x) < 0
    saturate = satfinite or infinity is None
    if math.isinf(x):
        bits = codes[-1] if saturate else infinity
    else:
        ax = Fraction(abs(x))
        i = bisect.bisect_right(values, ax) - 1
        low = i
        high = i + 1 if i + 1 < len(values) else None             # None: past the largest finite value
        if values[low] == ax:
            pick = low
        else:
            upward = {"rz": False, "rm": negative, "rp": not negative}.get(mode)
            if mode == "rn":
                step = (Fraction(values[low]) - Fraction(values[low - 1])) if high is None else None
                above = Fraction(values[high]) if high is not None else Fraction(values[low]) + step
                middle = (Fraction(values[low]) + above) / 2
                # a tie goes to the even significand; past the largest value the next one up is even
                upward = ax > middle or (ax == middle and (high is None or codes[high] % 2 == 0))
            pick = high if upward else low
        if pick is None:
            bits = codes[-1] if saturate or mode == "rz" or (mode == "rm" and not negative) or \
                (mode == "rp" and negative) else infinity
        else:
            bits = codes[pick]
    if relu and negative:
        return 0
    return bits | (sign_bit if negative else 0)


def widen(bits: int, fmt: str) -> float:
    """A format's value (NaN for its NaNs)."""
    codes, values, sign_bit, infinity, is_nan = FORMATS[fmt]
    if is_nan(bits):
        return math.nan
    magnitude = bits & (sign_bit - 1)
    value = math.inf if magnitude == infinity else values[magnitude]
    return -value if bits & sign_bit else value


def _is_nan32(v: int) -> bool:
    return (v & 0x7F800000) == 0x7F800000 and v & 0x7FFFFF != 0


def field_faults(got: np.ndarray, want: list, fmt: str, width: int, words) -> tuple[list, list]:
    """(lines where a field of `got` differs from the oracle's, lines giving each NaN field's bits): fields of `width`
    bits, low first; a NaN of the oracle (NAN) is met by any NaN of the format (`fmt`, or "f32")."""
    is_nan = _is_nan32 if fmt == "f32" else FORMATS[fmt][4]
    bad, nans = [], []
    for i, (g, w) in enumerate(zip(np.asarray(got).tolist(), want)):
        for k, wk in enumerate(w if isinstance(w, tuple) else (w,)):
            gk = (g >> (width * k)) & ((1 << width) - 1)
            where = f"  {' '.join(f'{int(v):08x}' for v in words[:3, i])}: field {k}"
            if wk == NAN:
                nans.append(f"{where}: {gk:#x}")
            if not (is_nan(gk) if wk == NAN else gk == wk):
                bad.append(f"{where} got {gk:#x}, want {'NaN' if wk == NAN else hex(wk)}")
    return bad, nans


def same(got: np.ndarray, want: list, fmt: str, words, what: str, width: int = 16) -> None:
    """Each field of `got` equals the oracle's, a NaN any NaN of the format."""
    bad, _ = field_faults(got, want, fmt, width, words)
    assert not bad, f"{what}: {len(bad)} fields wrong\n" + "\n".join(bad[:10])


# ----------------------------------------------------------------- operands
def narrow_operands(count: int, seed: int) -> np.ndarray:
    """[4, count] binary32 words: every exponent and the specials (test_ffma_rounding_s42.operands), then values in
    and around binary16's and the 8-bit formats' ranges (2^-30 .. 2^18), then binary16 ties: a half ulp of binary16
    (bit 12 of the binary32 significand) with and without bits below it."""
    rng = np.random.default_rng(seed)
    words = operands(count, seed)
    third = count // 3
    sign = rng.integers(0, 2, (3, third), dtype=np.uint32) << np.uint32(31)
    exponent = rng.integers(127 - 30, 127 + 18, (3, third), dtype=np.uint32) << np.uint32(23)
    mantissa = rng.integers(0, 1 << 23, (3, third), dtype=np.uint32)
    words[:3, third:2 * third] = sign | exponent | mantissa
    ties = (mantissa & ~np.uint32(0x1FFF)) | np.uint32(0x1000) | (rng.integers(0, 2, (3, third), dtype=np.uint32) *
                                                                  rng.integers(0, 0x1000, (3, third), dtype=np.uint32))
    words[:3, 2 * third:3 * third] = sign | exponent | ties
    return words


def f32(words) -> list:
    return np.asarray(words, np.uint32).view(np.float32).astype(float).tolist()


# ----------------------------------------------------------------- FADD.RZ / .RM / .RP
def add_exact(a: float, b: float, mode: str, sat: bool = False) -> np.float32:
    """IEEE 754 addition of binary32 values rounded once by `mode` (specials by NumPy's binary64 sum, exact there;
    an exact zero sum of opposite addends +0, -0 toward -inf, IEEE 754 6.3); .sat clamps to [0, 1], NaN to 0."""
    if not (math.isfinite(a) and math.isfinite(b)):
        with np.errstate(all="ignore"):
            r = np.float32(np.float64(a) + np.float64(b))
    else:
        x = Fraction(a) + Fraction(b)
        if x == 0:
            same_sign = math.copysign(1, a) == math.copysign(1, b)
            r = np.float32(a if same_sign else (-0.0 if mode == "rm" else 0.0))
        else:
            r = round_f32(x, mode)
    if sat:
        # a NaN and either zero are +0: the H200 stored +0 for add.rm.sat.f32's -0 sums (session 45's run,
        # tests/gpu/logs/2026-12-07-s45-h200-pytest_gpu.log; the PTX ISA's clamp to [0.0, 1.0] leaves -0's sign open)
        r = np.float32(0.0) if np.isnan(r) or r == 0 else np.float32(min(max(float(r), 0.0), 1.0))
    return r


ADDS = {  # name: (PTX, mode, b's sign, .sat)
    "add_rz": ("add.rz.f32 %f3, %f1, %f2;", "rz", 1, False),
    "add_rm": ("add.rm.f32 %f3, %f1, %f2;", "rm", 1, False),
    "add_rp": ("add.rp.f32 %f3, %f1, %f2;", "rp", 1, False),
    "sub_rz": ("sub.rz.f32 %f3, %f1, %f2;", "rz", -1, False),
    "add_rm_sat": ("add.rm.sat.f32 %f3, %f1, %f2;", "rm", 1, True),
}


def add_expected(name: str, words: np.ndarray) -> np.ndarray:
    _, mode, sign, sat = ADDS[name]
    return np.array([add_exact(a, sign * b, mode, sat) for a, b in zip(f32(words[0]), f32(words[1]))], np.float32)


@pytest.mark.parametrize("arch", ARCHES)
@pytest.mark.parametrize("name", sorted(ADDS))
def test_directed_additions_round_once(name, arch, tmp_path, needs_ptxas):
    """add / sub .rz / .rm / .rp .f32: "FADD.RZ (modifier RZ) is not modeled" before; now the exact sum rounded once
    in the mode (PTX ISA add: "rounding modifiers"; IEEE 754 4.3).  Operands near 1 + 2^-24 ties too."""
    words = narrow_operands(1536, 11)
    words[1, :64] = np.float32(2.0 ** -25).view(np.uint32) + np.arange(64, dtype=np.uint32)   # a tie and past it
    words[0, :64] = np.float32(1.0).view(np.uint32) + np.arange(64, dtype=np.uint32) % 2
    got = run(name, arch, ADDS[name][0] + " mov.b32 %r10, %f3;", words, tmp_path).view(np.float32)
    want = add_expected(name, words)
    bad = ~((got.view(np.uint32) == want.view(np.uint32)) | (np.isnan(got) & np.isnan(want)))
    assert not bad.any(), f"{name} ({arch}): {int(bad.sum())} wrong, first at " \
        f"{[hex(int(w)) for w in words[:2, np.flatnonzero(bad)[0]]]}: got {got[bad][0]!r}, want {want[bad][0]!r}"


# ----------------------------------------------------------------- conversions to 16-bit formats
# name: (PTX (result in %r10), targets, the oracle per thread from (a, b, the binary64 b:a), the fields' format, width)
ST16 = " cvt.u32.u16 %r10, %h1;"


def _pair(fmt, mode="rn", satfinite=False, relu=False):
    """cvt.<mode>.<fmt>x2.f32 d, a, b: {hi: a, lo: b}."""
    return lambda a, b, d: (narrow(b, fmt, mode, satfinite, relu), narrow(a, fmt, mode, satfinite, relu))


CONVERSIONS = {
    **{f"cvt_{m}_f16_f32": (f"cvt.{m}.f16.f32 %h1, %f1;" + ST16, ARCHES,
                            (lambda m: lambda a, b, d: narrow(a, "f16", m))(m), "f16", 16) for m in ("rn", "rz", "rm", "rp")},
    **{f"cvt_{m}_f16_f64": (f"cvt.{m}.f16.f64 %h1, %fd1;" + ST16, ARCHES,
                            (lambda m: lambda a, b, d: narrow(d, "f16", m))(m), "f16", 16) for m in ("rz", "rm", "rp")},
    "cvt_rn_relu_f16_f32": ("cvt.rn.relu.f16.f32 %h1, %f1;" + ST16, ARCHES,
                            lambda a, b, d: narrow(a, "f16", relu=True), "f16", 16),
    "cvt_rz_f16x2_f32": ("cvt.rz.f16x2.f32 %r10, %f1, %f2;", ARCHES, _pair("f16", "rz"), "f16", 16),
    "cvt_rn_relu_f16x2_f32": ("cvt.rn.relu.f16x2.f32 %r10, %f1, %f2;", ARCHES, _pair("f16", relu=True), "f16", 16),
    "cvt_rn_satfinite_f16x2_f32": ("cvt.rn.satfinite.f16x2.f32 %r10, %f1, %f2;", ARCHES,
                                   _pair("f16", satfinite=True), "f16", 16),
    "cvt_rz_bf16x2_f32": ("cvt.rz.bf16x2.f32 %r10, %f1, %f2;", ARCHES, _pair("bf16", "rz"), "bf16", 16),
    "cvt_rn_relu_bf16x2_f32": ("cvt.rn.relu.bf16x2.f32 %r10, %f1, %f2;", ARCHES, _pair("bf16", relu=True), "bf16", 16),
    "cvt_rz_bf16_f32": ("cvt.rz.bf16.f32 %h1, %f1;" + ST16, ARCHES, lambda a, b, d: narrow(a, "bf16", "rz"), "bf16",
                        16),
    # sm_90's 8-bit pairs: {hi: a, lo: b} in the low 16 bits (ptxas masks the rest)
    **{f"cvt_{r}{f}x2_f32": (f"cvt.rn.satfinite{'.relu' if r else ''}.{f}x2.f32 %h1, %f1, %f2;" + ST16, ("sm_90",),
                             _pair(f, satfinite=True, relu=bool(r)), f, 8)
       for f in ("e4m3", "e5m2") for r in ("", "relu_")},
}


def _f16x2_to_8(fmt):
    """cvt.rn.satfinite.<fmt>x2.f16x2 d, a: a's high half to d's high byte, its low half to the low byte."""
    def oracle(a_word: int):
        low, high = (widen(a_word >> k & 0xFFFF, "f16") for k in (0, 16))
        return narrow(low, fmt, satfinite=True), narrow(high, fmt, satfinite=True)
    return oracle


def _8_to_f16x2(fmt):
    """cvt.rn.f16x2.<fmt>x2 d, a: a's low byte to d's low half, its high byte to the high half (exact)."""
    def oracle(a_word: int):
        return tuple(narrow(widen(a_word >> k & 0xFF, fmt), "f16") for k in (0, 8))
    return oracle


WORD_CONVERSIONS = {  # name: (PTX, oracle of the a word, the fields' format, width)
    "cvt_e4m3x2_f16x2": ("cvt.rn.satfinite.e4m3x2.f16x2 %h1, %r2;" + ST16, _f16x2_to_8("e4m3"), "e4m3", 8),
    "cvt_e5m2x2_f16x2": ("cvt.rn.satfinite.e5m2x2.f16x2 %h1, %r2;" + ST16, _f16x2_to_8("e5m2"), "e5m2", 8),
    "cvt_f16x2_e4m3x2": ("mov.b32 {%h1, %h2}, %r2; cvt.rn.f16x2.e4m3x2 %r10, %h1;", _8_to_f16x2("e4m3"), "f16", 16),
    "cvt_f16x2_e5m2x2": ("mov.b32 {%h1, %h2}, %r2; cvt.rn.f16x2.e5m2x2 %r10, %h1;", _8_to_f16x2("e5m2"), "f16", 16),
}


def conversion_words(name: str) -> np.ndarray:
    words = narrow_operands(1536, 12)
    if name in WORD_CONVERSIONS:
        rng = np.random.default_rng(13)
        # every 16-bit pattern in each half over the threads, then random words
        every = np.arange(1536, dtype=np.uint32) * np.uint32(43) & np.uint32(0xFFFF)
        words[0] = every | (rng.integers(0, 1 << 16, 1536, dtype=np.uint32) << np.uint32(16))
        words[0, :256] = np.arange(256, dtype=np.uint32) | (np.arange(256, dtype=np.uint32)[::-1] << np.uint32(8))
    return words


def conversion_expected(name: str, words: np.ndarray) -> list:
    if name in WORD_CONVERSIONS:
        return [WORD_CONVERSIONS[name][1](int(w)) for w in words[0]]
    oracle = CONVERSIONS[name][2]
    doubles = (words[0].astype(np.uint64) | words[1].astype(np.uint64) << np.uint64(32)).view(np.float64).tolist()
    return [oracle(a, b, d) for a, b, d in zip(f32(words[0]), f32(words[1]), doubles)]


def _conversion_runs():
    runs = [(name, arch) for name, case in CONVERSIONS.items() for arch in case[1]]
    return runs + [(name, "sm_90") for name in WORD_CONVERSIONS]


@pytest.mark.parametrize(("name", "arch"), sorted(_conversion_runs()))
def test_narrow_conversions_round_once(name, arch, tmp_path, needs_ptxas):
    """cvt to binary16 / bfloat16 (.rz / .rm / .rp, .relu, .satfinite) and sm_90's E4M3 / E5M2 pairs: refused by name
    before probe s44 simops (F2FP.PACK_AB.RZ, F2F.F16.F32.RM, F2FP.RELU.MERGE_C, F2FP.SATFINITE.E4M3.F32.PACK_AB_MERGE_C
    ...); now each value the oracle's (module docstring)."""
    body, fmt, width = (WORD_CONVERSIONS[name][0], *WORD_CONVERSIONS[name][2:]) if name in WORD_CONVERSIONS else \
        (CONVERSIONS[name][0], *CONVERSIONS[name][3:])
    words = conversion_words(name)
    got = run(name, arch, body, words, tmp_path)
    want = conversion_expected(name, words)
    if "%h1;" + ST16 in body or body.endswith(ST16):
        got = got & np.uint32(0xFFFF)
    same(got, want, fmt, words, f"{name} ({arch})", width)


def test_oracle_by_hand():
    """The oracle on values worked by hand: binary16's largest 65504 and its ties, E4M3's 448 and 464 (the midpoint
    to 480, even 448 wins), E5M2's 57344, subnormal steps."""
    assert narrow(65504.0, "f16") == 0x7BFF and narrow(65520.0, "f16") == 0x7C00 and narrow(65519.0, "f16") == 0x7BFF
    assert narrow(65520.0, "f16", "rz") == 0x7BFF and narrow(-1e9, "f16", "rp") == 0xFBFF
    assert narrow(-1e9, "f16", "rm") == 0xFC00 and narrow(2.0 ** -25, "f16") == 0 and narrow(2.0 ** -25, "f16", "rp") == 1
    assert narrow(1 + 2.0 ** -11, "f16") == 0x3C00 and narrow(1 + 3 * 2.0 ** -11, "f16") == 0x3C02
    assert narrow(448.0, "e4m3", satfinite=True) == 0x7E and narrow(464.0, "e4m3", satfinite=True) == 0x7E
    assert narrow(-math.inf, "e4m3", satfinite=True) == 0xFE and narrow(2.0 ** -9, "e4m3") == 1
    assert narrow(2.0 ** -10, "e4m3") == 0 and narrow(3 * 2.0 ** -10, "e4m3") == 2
    assert narrow(57344.0, "e5m2", satfinite=True) == 0x7B and narrow(math.inf, "e5m2", satfinite=True) == 0x7B
    assert narrow(-3.0, "e5m2", relu=True) == 0 and narrow(-0.0, "bf16", relu=True) == 0
    assert widen(0x7E, "e4m3") == 448.0 and math.isnan(widen(0xFF, "e4m3")) and widen(0xFC, "e5m2") == -math.inf


# ----------------------------------------------------------------- fma.rn.relu.f16x2, cvt.rni .f16.f16, cvt .f16 .s32 / .u32
def _fma_relu(a: int, b: int, c: int):
    """fma.rn.relu.f16 of three binary16 bit patterns: the exact a * b + c rounded once, a negative result (and -0)
    +0, a NaN a NaN (specials by NumPy's binary64, exact there)."""
    x, y, z = (widen(v, "f16") for v in (a, b, c))
    if not all(math.isfinite(v) for v in (x, y, z)):
        with np.errstate(all="ignore"):
            r = float(np.float64(x) * np.float64(y) + np.float64(z))
        return NAN if math.isnan(r) else narrow(r, "f16", relu=True)
    exact = Fraction(x) * Fraction(y) + Fraction(z)
    return narrow(exact, "f16", relu=True) if exact != 0 else 0       # narrow() bisects the exact value


def _round_integral(x: float, how: str) -> float:
    """PTX cvt.rni / rzi / rmi / rpi to the same float type: IEEE 754 roundToIntegral, the sign of a zero kept."""
    if not math.isfinite(x):
        return x
    r = {"rni": round, "rzi": math.trunc, "rmi": math.floor, "rpi": math.ceil}[how](x)   # round(): ties to even
    return math.copysign(float(r), x)


def _ftz16(bits: int) -> float:
    """A binary16 operand under .ftz: a subnormal one a zero of its sign."""
    x = widen(bits, "f16")
    return math.copysign(0.0, x) if abs(x) < 2.0 ** -14 else x


def _half_ftz(op: str, a: int, b: int, c: int):
    """add / mul / fma .rn.ftz.f16 of binary16 bit patterns: subnormal operands flushed, the exact result rounded once
    to nearest, a subnormal result a zero of its sign (PTX ISA: ".ftz ... subnormal inputs and results are flushed to
    sign-preserving zero"); an exact zero's sign by IEEE 754 6.3 (rounding to nearest); specials by NumPy's binary64."""
    x, y, z = _ftz16(a), _ftz16(b), _ftz16(c)
    if op == "add":
        x, y, z = 1.0, x, y                          # 1 * a + b
    if op == "mul":
        z = -0.0                                     # a * b + -0 is a * b, its zero's sign included
    with np.errstate(all="ignore"):
        plain = float(np.float64(x) * np.float64(y) + np.float64(z))
    if not all(math.isfinite(v) for v in (x, y, z)):
        bits = NAN if math.isnan(plain) else narrow(plain, "f16")
    else:
        exact = Fraction(x) * Fraction(y) + Fraction(z)
        bits = narrow(exact if exact != 0 else plain, "f16")   # an exact zero: binary64's sign, IEEE 754 6.3
    if bits != NAN and bits & 0x7C00 == 0:
        bits &= 0x8000
    return bits


def _pairwise(op):
    return lambda a, b, c: tuple(_half_ftz(op, a >> k & 0xFFFF, b >> k & 0xFFFF, c >> k & 0xFFFF) for k in (0, 16))


def _frnd_ftz(how):
    def oracle(a, b, c):
        x = float(np.array([a], np.uint32).view(np.float32)[0])
        if math.isnan(x):
            return NAN
        x = math.copysign(0.0, x) if abs(x) < 2.0 ** -126 else x
        return _f32_bits(_round_integral(x, how))
    return oracle


def _f32_bits(x: float) -> int:
    return int(np.array([x], np.float32).view(np.uint32)[0])       # an integral binary32 value: exact


HALF_OPS = {  # name: (PTX on a = %r2, b = %r3, c = %r4 -> %r10, oracle(a, b, c words) -> fields, targets)
    "fma_relu_f16x2": ("fma.rn.relu.f16x2 %r10, %r2, %r3, %r4;",
                       lambda a, b, c: tuple(_fma_relu(a >> k & 0xFFFF, b >> k & 0xFFFF, c >> k & 0xFFFF)
                                             for k in (0, 16))),
    **{f"cvt_{how}_f16_f16": (f"mov.b32 {{%h1, %h2}}, %r2; cvt.{how}.f16.f16 %h3, %h1; cvt.u32.u16 %r10, %h3;",
                              (lambda how: lambda a, b, c: NAN if math.isnan(widen(a & 0xFFFF, "f16")) else
                               narrow(_round_integral(widen(a & 0xFFFF, "f16"), how), "f16"))(how))
       for how in ("rni", "rzi", "rmi", "rpi")},
    **{f"cvt_{m}_f16_{t}": (f"cvt.{m}.f16.{t} %h1, %r2; cvt.u32.u16 %r10, %h1;",
                            (lambda m, t: lambda a, b, c: narrow(float(a - (1 << 32) if t == "s32" and a >> 31 else a),
                                                                 "f16", m))(m, t))
       for m in ("rn", "rz", "rm", "rp") for t in ("s32", "u32")},
    "add_ftz_f16x2": ("add.ftz.f16x2 %r10, %r2, %r3;", _pairwise("add")),
    "mul_ftz_f16x2": ("mul.ftz.f16x2 %r10, %r2, %r3;", _pairwise("mul")),
    "fma_ftz_f16x2": ("fma.rn.ftz.f16x2 %r10, %r2, %r3, %r4;", _pairwise("fma")),
}
HALF_OPS["setp_lt_ftz_f16x2"] = ("setp.lt.ftz.f16x2 %p1|%p2, %r2, %r3; selp.u32 %r12, 1, 0, %p1; "
                                 "selp.u32 %r13, 2, 0, %p2; or.b32 %r10, %r12, %r13;",
                                 lambda a, b, c: sum(int(_ftz16(a >> k & 0xFFFF) < _ftz16(b >> k & 0xFFFF)) << (k // 16)
                                                     for k in (0, 16)))
FRND_FTZ = {f"cvt_{how}_ftz_f32": (f"cvt.{how}.ftz.f32.f32 %f5, %f1; mov.b32 %r10, %f5;", _frnd_ftz(how))
            for how in ("rmi", "rpi", "rzi", "rni")}


def half_words(count: int = 1024) -> np.ndarray:
    """[4, count]: binary16 halves of every exponent (random words), then small integers and binary16's range edges
    in the a word (the integer conversions' operands)."""
    rng = np.random.default_rng(14)
    words = rng.integers(0, 1 << 32, (4, count), dtype=np.uint32)
    edges = [0, 1, 2047, 2048, 2049, 4097, 65504, 65519, 65520, 65536, 0x7FFFFFFF, 0x80000000, 0xFFFFFFFF, 0xFFFF0010]
    words[0, :len(edges)] = edges
    words[0, 64:128] = rng.integers(0, 1 << 17, 64, dtype=np.uint32)
    # binary16 halves near integers: .5 ties, 2.5, -0.5, -0
    halves = [0x3800, 0x4100, 0xB800, 0x8000, 0x3C00, 0x3E00, 0xBE00, 0x4500, 0x7C00, 0xFC00, 0x7E00, 0x6400, 0x0001]
    words[0, 128:128 + len(halves)] = halves
    # subnormal binary16 halves and products that land in the subnormal range (.ftz), binary32 subnormals (FRND.FTZ)
    words[:3, 160:224] = rng.integers(0, 0x0800, (3, 64), dtype=np.uint32) * np.uint32(0x10001) ^ \
        (rng.integers(0, 2, (3, 64), dtype=np.uint32) * np.uint32(0x80008000))
    words[:2, 224:288] = (rng.integers(0x1000, 0x2C00, (2, 64), dtype=np.uint32) * np.uint32(0x10001))
    words[0, 288:320] = rng.integers(1, 1 << 23, 32, dtype=np.uint32) | (np.arange(32, dtype=np.uint32) % 2 << 31)
    return words


@pytest.mark.parametrize("arch", ARCHES)
@pytest.mark.parametrize("name", sorted(FRND_FTZ))
def test_integral_rounding_ftz(name, arch, tmp_path, needs_ptxas):
    """cvt.rmi / rpi / rzi / rni .ftz.f32.f32 (FRND.FTZ.FLOOR ...): "FRND.FTZ.TRUNC is not modeled" before probe s44
    simops; a subnormal operand is a zero of its sign first (floor(-2^-149) with .ftz is -0, not -1)."""
    body, oracle = FRND_FTZ[name]
    words = half_words()
    got = run(name, arch, body, words, tmp_path)
    want = [oracle(int(a), 0, 0) for a in words[0]]
    same(got, want, "f32", words, f"{name} ({arch})", 32)


@pytest.mark.parametrize("arch", ARCHES)
@pytest.mark.parametrize("name", sorted(HALF_OPS))
def test_half_relu_rounding_and_integer_conversions(name, arch, tmp_path, needs_ptxas):
    """fma.rn.relu.f16x2 (HFMA2.RELU / HFMA2.MMA.RELU: "(modifier RELU) is not modeled"), cvt.rni / rzi / rmi / rpi
    .f16.f16 (FRND.F16: "not modeled", then refused as a hazard where ptxas sets a scoreboard on it) and cvt.rn / rz
    / rm / rp .f16 .s32 / .u32 (I2F.F16: "not modeled") before probe s44 simops; now each the oracle's.  And add / mul
    / fma .ftz .f16x2 (HADD2.FTZ ...), which ran with .FTZ dropped: mul.ftz.f16x2 of 2^-24 and 1 stored 2^-24, not 0."""
    body, oracle = HALF_OPS[name]
    words = half_words()
    got = run(name, arch, body, words, tmp_path)
    want = [oracle(int(a), int(b), int(c)) for a, b, c in zip(words[0], words[1], words[2])]
    same(got, want, "f16", words, f"{name} ({arch})")


# ----------------------------------------------------------------- the GPU's (tests/gpu/test_sim_probes_gpu.py)
def sm90_cases() -> dict:
    """name -> (PTX for sm_90, input words [4, n], the expected first words as a list of fields per thread, the fields'
    format, width): the kernels above for tests/gpu/test_sim_probes_gpu.py (cubins by tests/gpu/prepare.sh; bobc's
    too where its assembler has every form: s44_assembles)."""
    out = {}
    for name in sorted(ADDS):
        words = narrow_operands(1536, 11)
        want = add_expected(name, words)
        out[f"s44_{name}"] = (kernel(f"s44_{name}", "sm_90", ADDS[name][0] + " mov.b32 %r10, %f3;"), words,
                              [NAN if np.isnan(w) else int(u) for w, u in zip(want, want.view(np.uint32))], "f32", 32)
    for name in sorted(CONVERSIONS) + sorted(WORD_CONVERSIONS):
        body, fmt, width = (WORD_CONVERSIONS[name][0], *WORD_CONVERSIONS[name][2:]) if name in WORD_CONVERSIONS else \
            (CONVERSIONS[name][0], *CONVERSIONS[name][3:])
        words = conversion_words(name)
        out[f"s44_{name}"] = (kernel(f"s44_{name}", "sm_90", body), words, conversion_expected(name, words), fmt, width)
    for name, (body, oracle) in sorted(HALF_OPS.items()):
        words = half_words()
        out[f"s44_{name}"] = (kernel(f"s44_{name}", "sm_90", body), words,
                              [oracle(int(a), int(b), int(c)) for a, b, c in zip(words[0], words[1], words[2])], "f16", 16)
    for name, (body, oracle) in sorted(FRND_FTZ.items()):
        words = half_words()
        out[f"s44_{name}"] = (kernel(f"s44_{name}", "sm_90", body), words, [oracle(int(a), 0, 0) for a in words[0]],
                              "f32", 32)
    return out
