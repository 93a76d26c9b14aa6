"""NaN, infinity, -0 and subnormal operands through ptxas's SASS for PTX float arithmetic and conversions,
in the simulator, against the bits docs/simulator.md, "NaN, infinity, -0 and subnormal results" documents
(probe s40 nanbits).  The expected words are computed here with Python's exact rationals (fractions) and
the rules' sources, never the executor's helpers:

- a binary32 result that is NaN is 0x7fffffff, a binary16 / bfloat16 one 0x7fff, whatever the inputs'
  payloads and signs: NVIDIA's math_constants.h CUDART_NAN_F and cuda_fp16.hpp / cuda_bf16.hpp
  CUDART_NAN_FP16 / CUDART_NAN_BF16 ("canonical NaN"), the NaN those headers' host conversions
  float -> half / bfloat16 write for any NaN and half -> float's ("discard sign of a NaN"); the PTX ISA
  leaves single- and half-precision NaNs unspecified.  Before, the simulator wrote NumPy's (x86's) bits:
  a payload and sign kept (-NaN + 1 = 0xffc00000), 0xffc00000 for inf - inf;
- min / max / .NaN (PTX ISA, min / max), .sat flushing a NaN to +0 (PTX ISA, add);
- cvt float-to-integer of a NaN: 0, but 1 << (bits - 1) (MININT for a signed destination) when the source
  is .f64 or the destination 64 bits wide (PTX ISA, cvt); the simulator wrote 0 for all;
- the PTX ISA's special-value tables of rcp / sqrt / rsqrt / lg2 / ex2 / sin / cos / tanh .approx (only
  inputs NaN, +-inf, +-0 and negative ones are compared: other results are approximations);
- a move or a select keeps a NaN's bits.

OPEN (the sources do not fix them; the simulator's choice, written here, is settled by the GPU run of the
same kernels, tests/gpu/test_sim_probes_gpu.py): binary64 NaN results (PTX: payloads "supported"; the
simulator keeps NumPy's -- the first NaN operand quieted, 0xfff8000000000000 for an invalid operation,
CUDART_NAN's bits), cvt.f64.f32 of a NaN (payload widened, quieted), cvt.f32.bf16 of a NaN (payload kept,
NVIDIA's host conversion's shift), neg.f32 of a NaN (see `neg_f32`).  And the rule above for every
binary32 / binary16 result itself: no NVIDIA document states the bits of FADD / FFMA / HADD2 ... for a
NaN operand; the GPU run checks them all.
"""
from __future__ import annotations

import math
import struct
import subprocess
from fractions import Fraction

import numpy as np
import pytest

from bobc.nvtools import ptxas
from tests.sass.test_sim_probe_s37_sassforms3 import _kernel

THREADS = 32
# binary32 specials, binary64 high words (x = b:a), binary16 pairs
VALUES = [0x00000000, 0xFF800000, 0x3F800000, 0xBF800000, 0x7F800000, 0x80000000, 0x7FC00000, 0xFFC00000,
          0x7F800001, 0xFFA12345, 0x7FFFFFFF, 0xFFFFFFFF, 0x00000001, 0x807FFFFF, 0x00800000, 0x7F7FFFFF,
          0x40490FDB, 0xC2F00000, 0x7FF80000, 0xFFF00000, 0x7FF00000, 0x7FF00001, 0x7E00FC00, 0x7C018000,
          0xFE000001, 0x7BFF3C00, 0x3C007E00, 0x7C008001, 0x4B800000, 0x38000000, 0x33000000, 0xC0000000]
A = np.array(VALUES, dtype=np.uint32)
B = np.roll(A, 5)
C = np.roll(A, 11)
D = np.roll(A, 17)

NAN32, NAN16, NAN64 = 0x7FFFFFFF, 0x7FFF, 0xFFF8000000000000


# ---------------------------------------------------------------- exact values and rounding
def _f32(u: int) -> float:
    return struct.unpack("<f", struct.pack("<I", u))[0]


def _f64(u: int) -> float:
    return struct.unpack("<d", struct.pack("<Q", u))[0]


def _f16(u: int) -> float:
    return float(np.array([u], dtype=np.uint16).view(np.float16)[0])


def _exact(x: float):
    """A finite non-zero float as a Fraction; zeros (their sign), infinities and NaNs stay floats."""
    return Fraction(x) if math.isfinite(x) and x != 0 else x


def _round(x, mantissa: int, emin: int, emax: int, nan: int, bits_of) -> int:
    """An exact value (Fraction, or a float inf / nan) rounded to nearest even to a format with `mantissa`
    stored bits and normal exponents emin..emax, as its bits; -0.0 is passed as the float."""
    if isinstance(x, float):
        if math.isnan(x):
            return nan
        return bits_of(x)
    if x == 0:
        return bits_of(0.0)
    sign, m = (-1 if x < 0 else 1), abs(x)
    e = max(math.floor(math.log2(m)), emin)
    while m >= Fraction(2) ** (e + 1):
        e += 1
    while e > emin and m < Fraction(2) ** e:
        e -= 1
    quantum = Fraction(2) ** (e - mantissa)
    q, rest = divmod(m, quantum)
    if rest > quantum / 2 or (rest == quantum / 2 and q % 2 == 1):
        q += 1
    value = q * quantum
    if value >= Fraction(2) ** (emax + 1):
        return bits_of(sign * math.inf)
    return bits_of(sign * float(value))


def _bits32(x: float) -> int:
    return struct.unpack("<I", struct.pack("<f", x))[0]


def _bits16(x: float) -> int:
    return int(np.array([x], dtype=np.float16).view(np.uint16)[0])


def _bits64(x: float) -> int:
    return struct.unpack("<Q", struct.pack("<d", x))[0]


def r32(x) -> int:
    return _round(x, 23, -126, 127, NAN32, _bits32)


def r16(x) -> int:
    return _round(x, 10, -14, 15, NAN16, _bits16)


def rbf16(x) -> int:
    return _round(x, 7, -126, 127, NAN16, lambda v: _bits32(v) >> 16)


def _op(f, *xs):
    """f of exact operands; a NaN operand or an invalid operation gives nan, an infinite one float math."""
    if any(isinstance(x, float) and math.isnan(x) for x in xs):
        return math.nan
    if all(isinstance(x, Fraction) for x in xs):
        return f(*xs)
    with np.errstate(all="ignore"):
        value = float(f(*[np.float64(x) for x in xs]))
    return value


def _add(x: float, y: float):
    if x == 0 and y == 0:
        return -0.0 if (math.copysign(1, x) < 0 and math.copysign(1, y) < 0) else 0.0
    value = _op(lambda a, b: a + b, _exact(x), _exact(y))
    return 0.0 if isinstance(value, Fraction) and value == 0 else value


def _mul(x: float, y: float):
    value = _op(lambda a, b: a * b, _exact(x), _exact(y))
    if isinstance(value, Fraction) and value == 0:
        return math.copysign(0.0, math.copysign(1, x) * math.copysign(1, y))
    return value


def _fma(x: float, y: float, z: float):
    product = _mul(x, y)
    if isinstance(product, float) and product == 0 and z == 0:
        return _add(product, z)
    if isinstance(product, float):
        return _op(lambda a, b: a + b, product, _exact(z))
    value = _op(lambda a, b: a + b, product, _exact(z))
    return 0.0 if isinstance(value, Fraction) and value == 0 else value


# ---------------------------------------------------------------- the rules, word by word
def _min_max(x: float, y: float, take_max: bool, nan_mode: bool, nan: int, bits_of) -> int:
    """PTX min / max: one NaN gives the other input, two (or one with .NaN) the canonical NaN;
    +0 > -0."""
    if (math.isnan(x) and math.isnan(y)) or (nan_mode and (math.isnan(x) or math.isnan(y))):
        return nan
    if math.isnan(x):
        return bits_of(y)
    if math.isnan(y):
        return bits_of(x)
    key = (lambda v: (v, math.copysign(1, v)))
    return bits_of(max(x, y, key=key) if take_max else min(x, y, key=key))


def _halves(f, a: int, b: int, c: int = 0) -> int:
    lo = f(_f16(a & 0xFFFF), _f16(b & 0xFFFF), _f16(c & 0xFFFF))
    hi = f(_f16(a >> 16), _f16(b >> 16), _f16(c >> 16))
    return lo | hi << 16


def _to_int(x: float, bits: int, signed: bool, from64: bool) -> int:
    """cvt.rzi of x: NaN -> 0, or 1 << (bits - 1) for a .f64 source or a 64-bit destination; saturated."""
    low, high = (-(1 << bits - 1), (1 << bits - 1) - 1) if signed else (0, (1 << bits) - 1)
    if math.isnan(x):
        return ((low if signed else 1 << bits - 1) if (from64 or bits == 64) else 0) & ((1 << bits) - 1)
    if math.isinf(x):
        v = high if x > 0 else low
    else:
        v = min(max(math.trunc(x), low), high)
    return v & ((1 << bits) - 1)


def _approx(name: str, x: float):
    """The PTX ISA's table value of an .approx function at a special input, else None (not compared)."""
    if not (math.isnan(x) or math.isinf(x) or x == 0 or (x < 0 and name in ("sqrt", "rsqrt", "lg2"))):
        return None
    if math.isnan(x):
        return math.nan
    neg = math.copysign(1, x) < 0
    if name == "rcp":
        return math.copysign(0.0 if math.isinf(x) else math.inf, x)
    if name == "sqrt":
        return math.nan if (neg and x != 0) else x
    if name == "rsqrt":
        return math.nan if (neg and x != 0) else (0.0 if math.isinf(x) else math.copysign(math.inf, x))
    if name == "lg2":
        return math.nan if (neg and x != 0) else (-math.inf if x == 0 else math.inf)
    if name == "ex2":
        return 1.0 if x == 0 else (math.inf if x > 0 else 0.0)
    if name == "sin":
        return math.nan if math.isinf(x) else x
    if name == "cos":
        return math.nan if math.isinf(x) else 1.0
    if name == "tanh":
        return x if x == 0 else math.copysign(1.0, x)
    raise ValueError(name)


def _wide(a: int, b: int) -> float:
    return _f64(a | b << 32)


def _nan64(*xs: int) -> int | None:
    """OPEN (the simulator's, NumPy's x86 rule): the first NaN operand quieted, else None."""
    for u in xs:
        if (u >> 52) & 0x7FF == 0x7FF and u & ((1 << 52) - 1):
            return u | 1 << 51
    return None


def _narrowed(u: int) -> int:
    """cvt.rn.f32.f64 of the binary64 with bits `u`: a NaN is its sign, 0x7fc00000 and the top 23 of its
    52 payload bits (the H200's rule, above); any other value rounded to nearest even."""
    if (u >> 52) & 0x7FF == 0x7FF and u & ((1 << 52) - 1):
        return (u >> 63) << 31 | 0x7FC00000 | (u >> 29) & 0x7FFFFF
    return r32(_exact(_f64(u)))


def _f64_result(value: float, *operands: int) -> int:
    first = _nan64(*operands)
    if first is not None:
        return first
    return NAN64 if math.isnan(value) else _bits64(value)


def _saturated(value) -> int | None:
    """.sat: clamped to [0, 1], a NaN +0 (PTX ISA, add); a zero result is not compared (whether -0 stays -0
    is not stated)."""
    if isinstance(value, float) and math.isnan(value):
        return 0
    if value == 0:
        return None
    if isinstance(value, float) and math.isinf(value):
        return r32(1.0 if value > 0 else 0.0)
    return r32(min(max(Fraction(value), Fraction(0)), Fraction(1)))


# name -> (PTX body, archs, word(a, b, c, d) -> the documented 32- or 64-bit result or None (not compared),
#          64-bit result?, open?)
CASES = {
    "add_f32": ("add.rn.f32 %r10, %r2, %r3;", lambda a, b, c, d: r32(_add(_f32(a), _f32(b))), False, False),
    "mul_f32": ("mul.rn.f32 %r10, %r2, %r3;", lambda a, b, c, d: r32(_mul(_f32(a), _f32(b))), False, False),
    "fma_f32": ("fma.rn.f32 %r10, %r2, %r3, %r4;",
                lambda a, b, c, d: r32(_fma(_f32(a), _f32(b), _f32(c))), False, False),
    "add_sat_f32": ("add.rn.sat.f32 %r10, %r2, %r3;", lambda a, b, c, d: _saturated(_add(_f32(a), _f32(b))),
                    False, False),
    "max_f32": ("max.f32 %r10, %r2, %r3;",
                lambda a, b, c, d: _min_max(_f32(a), _f32(b), True, False, NAN32, _bits32), False, False),
    "min_f32_ba": ("min.f32 %r10, %r3, %r2;",
                   lambda a, b, c, d: _min_max(_f32(b), _f32(a), False, False, NAN32, _bits32), False, False),
    "min_nan_f32": ("min.NaN.f32 %r10, %r2, %r3;",
                    lambda a, b, c, d: _min_max(_f32(a), _f32(b), False, True, NAN32, _bits32), False, False),
    "cvt_rni_f32": ("cvt.rni.f32.f32 %r10, %r2;",
                    lambda a, b, c, d: (lambda x: NAN32 if math.isnan(x) else
                                        _bits32(x if math.isinf(x) or x == 0 else
                                                math.copysign(float(round(Fraction(x))), x)))(_f32(a)),
                    False, False),
    "cvt_f16_f32": ("cvt.rn.f16.f32 %h1, %r2; cvt.u32.u16 %r10, %h1;",
                    lambda a, b, c, d: r16(_exact(_f32(a))), False, False),
    "cvt_f32_f16": ("mov.b32 {%h1, %h2}, %r2; cvt.f32.f16 %r10, %h1;",
                    lambda a, b, c, d: r32(_exact(_f16(a & 0xFFFF))), False, False),
    "cvt_f16x2_f32": ("cvt.rn.f16x2.f32 %r10, %r2, %r3;",
                      lambda a, b, c, d: r16(_exact(_f32(b))) | r16(_exact(_f32(a))) << 16, False, False),
    "cvt_bf16x2_f32": ("cvt.rn.bf16x2.f32 %r10, %r2, %r3;",
                       lambda a, b, c, d: rbf16(_exact(_f32(b))) | rbf16(_exact(_f32(a))) << 16, False, False),
    # a binary64 NaN narrowed keeps its sign and its payload's top 23 bits, quieted (not the canonical NaN):
    # the H200's words for this kernel (session 40, tests/gpu/logs/2026-12-06-s40-h200-final-pytest_gpu.log:
    # 0x7fffffff7f7fffff -> 0x7ffffffb, 0xffffffff40490fdb -> 0xfffffffa, 0x7ff800007c018000 -> 0x7fc00003)
    "cvt_f32_f64": ("cvt.rn.f32.f64 %r10, %rd13;", lambda a, b, c, d: _narrowed(a | b << 32), False, False),
    "cvt_rzi_s32_f32": ("cvt.rzi.s32.f32 %r10, %r2;",
                        lambda a, b, c, d: _to_int(_f32(a), 32, True, False), False, False),
    "cvt_rzi_s32_f64": ("cvt.rzi.s32.f64 %r10, %rd13;",
                        lambda a, b, c, d: _to_int(_wide(a, b), 32, True, True), False, False),
    "cvt_rzi_u32_f64": ("cvt.rzi.u32.f64 %r10, %rd13;",
                        lambda a, b, c, d: _to_int(_wide(a, b), 32, False, True), False, False),
    # (cvt.rzi.s64.f64: ptxas's F2I.S64.TRUNC of an .f32 source has no encoding in bobc's assembler yet,
    # and tests/gpu/prepare.sh assembles every kernel)
    "cvt_rzi_s64_f64": ("cvt.rzi.s64.f64 %rd20, %rd13; mov.b64 {%r10, %r11}, %rd20;",
                        lambda a, b, c, d: _to_int(_wide(a, b), 64, True, True), True, False),
    "cvt_rzi_u64_f32": ("cvt.rzi.u64.f32 %rd20, %r2; mov.b64 {%r10, %r11}, %rd20;",
                        lambda a, b, c, d: _to_int(_f32(a), 64, False, False), True, False),
    "add_f16x2": ("add.rn.f16x2 %r10, %r2, %r3;",
                  lambda a, b, c, d: _halves(lambda x, y, z: r16(_add(x, y)), a, b), False, False),
    "mul_f16x2": ("mul.rn.f16x2 %r10, %r2, %r3;",
                  lambda a, b, c, d: _halves(lambda x, y, z: r16(_mul(x, y)), a, b), False, False),
    "fma_f16x2": ("fma.rn.f16x2 %r10, %r2, %r3, %r4;",
                  lambda a, b, c, d: _halves(lambda x, y, z: r16(_fma(x, y, z)), a, b, c), False, False),
    "min_f16x2_ba": ("min.f16x2 %r10, %r3, %r2;",
                     lambda a, b, c, d: _halves(lambda x, y, z: _min_max(y, x, False, False, NAN16, _bits16), a, b),
                     False, False),
    "max_nan_f16x2": ("max.NaN.f16x2 %r10, %r2, %r3;",
                      lambda a, b, c, d: _halves(lambda x, y, z: _min_max(x, y, True, True, NAN16, _bits16), a, b),
                      False, False),
    "copy_b32": ("mov.b32 %r10, %r2;", lambda a, b, c, d: a, False, False),
    "selp_f32": ("setp.ne.u32 %p1, %r4, 0; selp.f32 %r10, %r2, %r3, %p1;",
                 lambda a, b, c, d: a if c else b, False, False),
    # OPEN: binary64 NaNs (the simulator's: NumPy's x86 rule)
    # (Python's float + and * are IEEE binary64's, correctly rounded)
    "add_f64": ("add.rn.f64 %rd20, %rd13, %rd14; mov.b64 {%r10, %r11}, %rd20;",
                lambda a, b, c, d: _f64_result(_wide(a, b) + _wide(c, d), a | b << 32, c | d << 32), True, True),
    "mul_f64": ("mul.rn.f64 %rd20, %rd13, %rd14; mov.b64 {%r10, %r11}, %rd20;",
                lambda a, b, c, d: _f64_result(_wide(a, b) * _wide(c, d), a | b << 32, c | d << 32), True, True),
    "cvt_f64_f32": ("cvt.f64.f32 %rd20, %r2; mov.b64 {%r10, %r11}, %rd20;",
                    lambda a, b, c, d: ((a >> 31) << 63 | 0x7FF << 52 | 1 << 51 | (a & 0x3FFFFF) << 29)
                    if math.isnan(_f32(a)) else _bits64(_f32(a)), True, True),
}
for _name in ("rcp", "sqrt", "rsqrt", "lg2", "ex2", "sin", "cos", "tanh"):
    CASES[f"{_name}_approx"] = (
        f"{_name}.approx.f32 %r10, %r2;",
        lambda a, b, c, d, _name=_name: (lambda v: None if v is None else r32(_exact(v)))(_approx(_name, _f32(a))),
        False, False)
SM90_ONLY = {"cvt_f32_bf16": ("mov.b32 {%h1, %h2}, %r2; cvt.f32.bf16 %r10, %h1;",
                              # OPEN: the bits widened (NVIDIA's host __bfloat162float), a NaN's payload kept
                              lambda a, b, c, d: (a & 0xFFFF) << 16, False, True)}
OPEN = sorted(name for name, case in {**CASES, **SM90_ONLY}.items() if case[3])


def _case(name: str):
    return CASES.get(name) or SM90_ONLY[name]


def result(name: str, out: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """What a kernel stored and the documented words, where the rules fix them (`out`: two words a thread)."""
    _, word, wide, _ = _case(name)
    want = [word(int(a), int(b), int(c), int(d)) for a, b, c, d in zip(A, B, C, D)]
    keep = [w is not None for w in want]
    got = out.view(np.uint64) if wide else out[0::2]
    dtype = np.uint64 if wide else np.uint32
    return got[keep], np.array([w for w in want if w is not None], dtype=dtype)


def _run(name: str, arch: str, tmp_path) -> np.ndarray:
    from bobc.sim.kernel import run_kernel
    ptx, cubin = tmp_path / f"{name}.ptx", tmp_path / f"{name}.cubin"
    ptx.write_text(_kernel(name, arch, _case(name)[0]))
    subprocess.run([ptxas(), f"-arch={arch}", "-O3", "-o", str(cubin), str(ptx)], check=True, capture_output=True)
    return run_kernel(cubin.read_bytes(), arch, grid=1, block=THREADS, params=["out", "in", np.uint32(THREADS)],
                      buffers={"out": np.zeros(2 * THREADS, np.uint32), "in": np.concatenate([A, B, C, D])},
                      kernel_name=name)["out"]


def _show(got: np.ndarray, want: np.ndarray) -> str:
    width = 16 if got.dtype == np.uint64 else 8
    return "\n".join(f"  {int(g):0{width}x} != {int(w):0{width}x}" for g, w in zip(got, want) if g != w)


@pytest.mark.parametrize("arch", ["sm_86", "sm_90"])
@pytest.mark.parametrize("name", sorted(CASES))
def test_special_operands_give_the_documented_bits(name, arch, tmp_path, needs_ptxas):
    got, want = result(name, _run(name, arch, tmp_path))
    assert got.tobytes() == want.tobytes(), f"{arch} {name} (simulator != documented):\n{_show(got, want)}"


def test_bf16_widening_keeps_the_bits(tmp_path, needs_ptxas):
    got, want = result("cvt_f32_bf16", _run("cvt_f32_bf16", "sm_90", tmp_path))
    assert got.tobytes() == want.tobytes(), _show(got, want)


def test_the_inputs_hold_every_kind_of_special():
    """Each binary32 kind (+-NaN quiet and signalling, +-inf, +-0, +-subnormal), binary64 NaN and infinity
    high words and binary16 NaN / infinity / subnormal halves are among the inputs."""
    kinds = {(u >> 31, "nan" if u & 0x7FFFFFFF > 0x7F800000 else "inf" if u & 0x7FFFFFFF == 0x7F800000 else
              "zero" if u & 0x7FFFFFFF == 0 else "sub" if u & 0x7F800000 == 0 else "normal") for u in VALUES}
    assert {(s, k) for s in (0, 1) for k in ("nan", "inf", "zero", "sub", "normal")} <= kinds
    assert {0x7FF80000, 0xFFF00000, 0x7FF00000} <= set(VALUES)
    halves = {h for u in VALUES for h in (u & 0xFFFF, u >> 16)}
    assert {0x7E00, 0xFE00, 0x7C00, 0xFC00, 0x7C01, 0x8000, 0x0001} <= halves


def sm90_cases() -> dict:
    """Every kernel of this file for sm_90, for the GPU (tests/gpu/test_sim_probes_gpu.py; cubins made by
    tests/gpu/prepare.sh): name -> (its PTX, result(out) -> (stored, the documented bits))."""
    return {name: (_kernel(name, "sm_90", _case(name)[0]), lambda out, name=name: result(name, out))
            for name in sorted({**CASES, **SM90_ONLY})}
