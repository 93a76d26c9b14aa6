"""Session 45's forms (helper asmgaps4's tools/ptx_corpus/user_forms_s45.ptx / sm90_user_forms_s45.ptx, and helper
simint's integer readings) that the simulator executes but no GPU run had checked (probe s46 gpuprobes46): cvt between
every integer width and binary16 / bfloat16 / binary32 / binary64 in each rounding (F2I / I2F / F2F at every width,
F2F.BF16.F64.RM, I2F.F16.S64), cvt.sat between integer widths (I2I, and the PTX destination-extension rule), 64-bit and
scoped atomics on global and shared memory (ATOMG / ATOMS .64, .CAS.64, .ADD.F64), .v2 / .v4 loads and stores with each
cache hint, binary64 add / mul / fma in the directed roundings, and bfind.s64 (FLO of a complemented source).

Each kernel is ptxas's -O3 code of a small PTX kernel (thread i reads %a = A[i], %b = B[i], %c = C[i]; %wab is the
64-bit b:a, %dab the same bits as .f64; it writes out[i, :]), run in the simulator with the control-code checker on.
The expected words are this file's, from the PTX ISA's definitions computed in Python integers and exact rationals
(fractions.Fraction rounded by IEEE 754 4.3's rule for the mode onto the format's values, subnormals kept; past the
largest finite value an infinity toward it and the largest finite value otherwise, IEEE 754 7.4):
- float to integer: rounded by .rni / .rzi / .rmi / .rpi, clamped to the destination's range, NaN 0 (PTX ISA, cvt:
  "saturation is implicit"); a NaN 0, but 1 << (bits - 1) (MININT for a signed destination) from .f64 or to 64
  bits (PTX ISA 9.0, cvt: "Zero if source is not .f64 and destination is not .s64, .u64");
- a destination register wider than the type holds the value sign-extended for a signed type and zero-extended
  otherwise; a source register wider than the type is read truncated to it (PTX ISA, "Operand Size Exceeding
  Instruction-Type Size");
- a NaN result need only be a NaN of the format (NAN16 / NAN32 / NAN64 below); the simulator's bits and the GPU's are
  compared by tests/gpu/test_sim_probes_gpu.py, which runs sm90_cases() on the GPU.
"""
from __future__ import annotations

import math
import sys
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
from ptx_kernels import compile_ptx  # noqa: E402

from bobc.sim.kernel import run_kernel  # noqa: E402

M32, M64 = (1 << 32) - 1, (1 << 64) - 1


class Nan:
    """An expected word: any NaN of `width` bits (in `field` bits of the word when width < 32); OPEN: anything."""

    def __init__(self, width: int):
        self.width = width

    def matches(self, word: int) -> bool:
        if self.width == 0:
            return True
        e, m = {16: (0x7C00, 0x3FF), 32: (0x7F800000, 0x7FFFFF), 64: (0x7FF00000, 0xFFFFF)}[self.width]
        if self.width == 16:
            word &= 0xFFFF
        return word & e == e and (word & m != 0 or self.width == 64)

    def __repr__(self):
        return "OPEN" if self.width == 0 else f"NaN{self.width}"


NAN16, NAN32, OPEN = Nan(16), Nan(32), Nan(0)


class Nan64Low:
    """The low word of a binary64 NaN: anything, when the high word is NaN64 (the NaN test is on the pair)."""

    def matches(self, word: int) -> bool:
        return True

    def __repr__(self):
        return "NaN64.lo"


NAN64_LO, NAN64_HI = Nan64Low(), Nan(64)


def _ptx(body: str, outputs: int, target: str = "sm_90", shared: int = 0) -> str:
    stores = "\n".join(f"  st.global.b32 [%rd5+{4 * k}], %o{k};" for k in range(outputs))
    smem = f"  .shared .align 16 .b8 sm[{shared}];\n" if shared else ""
    return f""".version 8.8
.target {target}
.address_size 64
.visible .entry k(.param .u64 out, .param .u64 A, .param .u64 B, .param .u64 C)
{{
{smem}  .reg .b32 %a, %b, %c, %o<{max(outputs, 1)}>, %i, %r<16>; .reg .b64 %rd<16>, %w<16>, %wab;
  .reg .f32 %fa, %f<16>; .reg .f64 %dab, %d<16>; .reg .b16 %h<16>; .reg .pred %p<8>;
  mov.u32 %i, %tid.x;
  ld.param.u64 %rd1, [A]; ld.param.u64 %rd2, [B]; ld.param.u64 %rd3, [C]; ld.param.u64 %rd4, [out];
  cvta.to.global.u64 %rd1, %rd1; cvta.to.global.u64 %rd2, %rd2; cvta.to.global.u64 %rd3, %rd3;
  cvta.to.global.u64 %rd4, %rd4;
  mul.wide.u32 %rd6, %i, 4;
  add.s64 %rd7, %rd1, %rd6; add.s64 %rd8, %rd2, %rd6; add.s64 %rd9, %rd3, %rd6;
  ld.global.b32 %a, [%rd7]; ld.global.b32 %b, [%rd8]; ld.global.b32 %c, [%rd9];
  mov.b32 %fa, %a; mov.b64 %wab, {{%a, %b}}; mov.b64 %dab, %wab;
  mul.wide.u32 %rd6, %i, {4 * outputs};
  add.s64 %rd5, %rd4, %rd6;
{body}
{stores}
  ret;
}}
"""


def simulate(ptx: str, target: str, a, b, c, outputs: int) -> np.ndarray:
    """ptxas's cubin of `ptx` for `target` run in the simulator: out[n, outputs] (uint32)."""
    a, b, c = (np.asarray(x, dtype=np.uint32) for x in (a, b, c))
    n = a.size
    return run_kernel(compile_ptx(ptx, target), target, grid=1, block=n, params=["out", "A", "B", "C"],
                      buffers={"out": np.zeros((n, outputs), np.uint32), "A": a, "B": b, "C": c})["out"]


def faults(got: np.ndarray, want: list[list], a, b, c) -> list[str]:
    """Every word of `got` ([n, outputs]) unlike `want` (ints, or Nan / Nan64Low / OPEN patterns)."""
    bad = []
    for i, row in enumerate(want):
        for k, w in enumerate(row):
            g = int(got[i][k])
            if isinstance(w, Nan) and w.width == 64:        # a binary64 NaN: the pair's fraction, not the high word's
                pair = g << 32 | int(got[i][k - 1])
                if pair >> 52 & 0x7FF == 0x7FF and pair & ((1 << 52) - 1):
                    continue
            elif (w.matches(g) if not isinstance(w, int) else g == w & M32):
                continue
            bad.append(f"  a={int(a[i]):#010x} b={int(b[i]):#010x} c={int(c[i]):#010x} word {k}: "
                       f"got {g:#010x} want {w if not isinstance(w, int) else hex(w & M32)}")
    return bad


# ----------------------------------------------------------------- the formats, from their definitions
FORMATS = {"f16": (5, 10), "bf16": (8, 7), "f32": (8, 23), "f64": (11, 52)}
INTS = {f"{s}{w}": ((-(1 << w - 1), (1 << w - 1) - 1) if s == "s" else (0, (1 << w) - 1))
        for s in "su" for w in (8, 16, 32, 64)}


def rounded_bits(x: Fraction, negative: bool, fmt: str, mode: str) -> int:
    """IEEE 754's bits of the exact value x (sign `negative` for a zero) rounded once by mode (rn / rz / rm / rp)
    onto fmt's values, subnormals kept; past the largest finite value an infinity toward it, else the largest."""
    ebits, mbits = FORMATS[fmt]
    bias = (1 << ebits - 1) - 1
    sign = (1 << ebits + mbits) if negative else 0
    a = abs(x)
    if a == 0:
        return sign
    e = a.numerator.bit_length() - a.denominator.bit_length()
    if Fraction(2) ** e > a:
        e -= 1
    e = max(e, 1 - bias)
    scaled = a * Fraction(2) ** (mbits - e)
    n = scaled.numerator // scaled.denominator
    r = scaled - n
    up = {"rn": r > Fraction(1, 2) or (r == Fraction(1, 2) and n & 1 == 1), "rz": False,
          "rm": r != 0 and negative, "rp": r != 0 and not negative}[mode]
    n += up
    if n >> (mbits + 1):
        n, e = n >> 1, e + 1
    if e > bias:
        toward = mode == "rn" or (mode == "rp" and not negative) or (mode == "rm" and negative)
        return sign | ((((1 << ebits) - 1) << mbits) if toward else (((1 << ebits) - 2) << mbits | ((1 << mbits) - 1)))
    if n < (1 << mbits):
        return sign | n
    return sign | (e + bias) << mbits | (n - (1 << mbits))


def value(bits: int, fmt: str) -> float:
    if fmt == "f16":
        return float(np.array([bits & 0xFFFF], np.uint16).view(np.float16)[0])
    if fmt == "bf16":
        return float(np.array([(bits & 0xFFFF) << 16], np.uint32).view(np.float32)[0])
    if fmt == "f32":
        return float(np.array([bits & M32], np.uint32).view(np.float32)[0])
    return float(np.array([bits & M64], np.uint64).view(np.float64)[0])


def convert_float(x: float, fmt: str, mode: str):
    """cvt.<mode>.<fmt>.<wider or narrower float> of x: its bits, or NaN / an infinity of the format."""
    ebits, mbits = FORMATS[fmt]
    if math.isnan(x):
        return NAN16 if fmt in ("f16", "bf16") else NAN32 if fmt == "f32" else NAN64_HI
    negative = math.copysign(1.0, x) < 0
    if math.isinf(x):
        return (1 << ebits + mbits if negative else 0) | ((1 << ebits) - 1) << mbits
    return rounded_bits(Fraction(x), negative, fmt, mode)


def round_integral(x: float, mode: str) -> int:
    """x (finite) to an integer: rni to nearest even, rzi toward zero, rmi down, rpi up."""
    q = Fraction(x)
    low = math.floor(q)
    if mode == "rni":
        return low + 1 if q - low > Fraction(1, 2) or (q - low == Fraction(1, 2) and low % 2) else low
    return {"rzi": math.trunc, "rmi": math.floor, "rpi": math.ceil}[mode](q)


def float_to_int(x: float, kind: str, mode: str, source: str = "f32") -> int:
    """cvt.<mode>.<kind>.<source> of x: rounded, clamped to kind's range; a NaN 0 where the source is not .f64 and the
    destination not 64 bits wide, else 1 << (bits - 1) (MININT for a signed kind; PTX ISA 9.0, cvt)."""
    low, high = INTS[kind]
    if math.isnan(x):
        return 0 if source != "f64" and not kind.endswith("64") else (low or 1 << (int(kind[1:]) - 1))
    if math.isinf(x):
        return low if x < 0 else high
    return min(max(round_integral(x, mode), low), high)


def words64(v) -> list:
    if v is OPEN:
        return [OPEN, OPEN]
    if v is NAN64_HI:
        return [NAN64_LO, NAN64_HI]
    return [v & M32, (v >> 32) & M32]


def _ordinary_f32() -> list[int]:
    values = [0.0, -0.0, 0.5, -0.5, 1.5, 2.5, -2.5, 0.49999997, -0.99999994, 127.5, 128.5, -128.5, -129.0, 255.5,
              256.0, -1.0, 32767.5, 32768.0, -32768.5, -32769.0, 65535.5, 65536.0, 2147483520.0, 2.0 ** 31,
              -2.0 ** 31, -2147483904.0, 4294967040.0, 2.0 ** 32, 2.0 ** 63, -2.0 ** 63, 2.0 ** 64, -2.0 ** 64,
              1e30, -1e30, 3.5, -3.5, 9007199254740992.0, -0.75]
    words = np.array(values, np.float32).view(np.uint32).tolist()
    return words + [0x7F800000, 0xFF800000, 0x00000001, 0x80000001, 0x007FFFFF, 0x807FFFFF, 0x5EFFFFFF, 0xDF000001,
                    0x7FC00000, 0xFF800001]


F32_WORDS = _ordinary_f32()


def _f64_words() -> list[int]:
    values = [0.0, -0.0, 0.5, -0.5, 1.5, 2.5, -2.5, 0.49999999999999994, 127.5, 128.5, -128.5, -129.0, 255.5,
              256.0, -1.0, 32767.5, 32768.0, -32768.5, 65535.5, 65536.0, 2147483647.5, 2147483648.0,
              -2147483648.5, -2147483649.0, 4294967295.5, 4294967296.0, 2.0 ** 63, -2.0 ** 63, 2.0 ** 64,
              9223372036854774784.0, 18446744073709549568.0, -9223372036854777856.0, 1e300, -1e300,
              1.0 + 2.0 ** -24, 1.0 + 2.0 ** -23 + 2.0 ** -24, -(1.0 + 2.0 ** -24 + 2.0 ** -40), 3.4028235677973366e38,
              3.4028235677973362e38, -3.4028235677973366e38, 1.1754942106924411e-38, 2.0 ** -149, 2.0 ** -150,
              3.0 * 2.0 ** -151, -(2.0 ** -150), 65520.0, 65519.99, -65520.0, 2.0 ** -24, 2.0 ** -25, 3 * 2.0 ** -26,
              6.103515625e-05, 1.0 + 2.0 ** -8, 1.0 + 3 * 2.0 ** -9, 3.3895313892515355e38, 3.3961775292304e38, 0.1]
    words = np.array(values, np.float64).view(np.uint64).tolist()
    return words + [0x7FF0000000000000, 0xFFF0000000000000, 0x0000000000000001, 0x800FFFFFFFFFFFFF,
                    0x7FF8000000000000, 0xFFF0000000000001]


F64_WORDS = _f64_words()
HALF_WORDS = [0x0000, 0x8000, 0x3C00, 0xBC00, 0x3800, 0xB800, 0x3E00, 0x4100, 0xC100, 0x5BFF, 0x5C00, 0xD804,
              0xD808, 0x77FF, 0x7800, 0xF800, 0x7BFF, 0xFBFF, 0x7C00, 0xFC00, 0x0001, 0x8001, 0x03FF, 0x3BFF,
              0x57F8, 0x57FC, 0x7E00, 0xFD01]
BF16_WORDS = [0x0000, 0x8000, 0x3F80, 0xBF80, 0x3F00, 0xBF00, 0x3FC0, 0x4020, 0xC020, 0x4300, 0x4301, 0xC301,
              0x4380, 0x46FF, 0x4700, 0xC700, 0x4F00, 0xCF00, 0x4F80, 0x5F00, 0xDF00, 0x5F80, 0x7F7F, 0xFF7F,
              0x7F80, 0xFF80, 0x0001, 0x8001, 0x7FC0, 0xFF81]
INT_KINDS = ["s8", "u8", "s16", "u16", "s32", "u32", "s64", "u64"]
ROUNDINGS = ["rni", "rzi", "rmi", "rpi"]


def _to_int_case(fmt: str, words: list[int], junk: int) -> tuple:
    """cvt.<rounding>.<kind>.<fmt> of each word into each kind: (body, outputs, (A, B, C), rows).  8- and 16-bit
    kinds into a 32-bit register (the PTX widening rule); binary16 / bfloat16 from a 16-bit register (its word's low
    half, the high half `junk`).  bfloat16 (ptxas takes no 8-bit kind, nor a register wider than the kind): 16-bit
    kinds into a 16-bit register, stored zero-extended."""
    source = {"f32": "%fa", "f64": "%dab"}.get(fmt, "%h1")
    body = ["  cvt.u16.u32 %h1, %a;"] if fmt in ("f16", "bf16") else []
    k, columns = 0, []
    for kind in INT_KINDS if fmt != "bf16" else INT_KINDS[2:]:
        for mode in ROUNDINGS:
            if fmt == "bf16" and kind.endswith("16"):
                body.append(f"  cvt.{mode}.{kind}.{fmt} %h2, {source}; cvt.u32.u16 %o{k}, %h2;")
                k += 1
            elif kind.endswith("64"):
                body.append(f"  cvt.{mode}.{kind}.{fmt} %w1, {source}; mov.b64 {{%o{k}, %o{k + 1}}}, %w1;")
                k += 2
            else:
                body.append(f"  cvt.{mode}.{kind}.{fmt} %o{k}, {source};")
                k += 1
            columns.append((kind, mode))
    if fmt == "f64":
        a, b = [w & M32 for w in words], [w >> 32 for w in words]
    else:
        a, b = [w | junk for w in words], [0] * len(words)
    rows = []
    for w in words:
        x = value(w, fmt)
        row = []
        for kind, mode in columns:
            v = float_to_int(x, kind, mode, fmt)
            if fmt == "bf16" and kind.endswith("16"):
                v &= 0xFFFF
            row += (words64(v & M64) if kind.endswith("64") else [v & M32])
        rows.append(row)
    return "\n".join(body), k, (a, b, [0] * len(words)), rows


INT_WORDS64 = [0, 1, M64, 1 << 63, (1 << 63) - 1, 127, 128, 255, 256, (-129) & M64, (-128) & M64, 0x7FFF, 0x8000,
               0xFFFF, 0x10000, (-32769) & M64, 0x7FFFFFFF, 0x80000000, 0xFFFFFFFF, 1 << 32, (-(1 << 31)) & M64,
               (-(1 << 31) - 1) & M64, 2049, 2051, 16777217, 16777219, (1 << 53) + 1, (1 << 53) + 3,
               (1 << 63) + (1 << 39) + 1, 0xFFFFFFFFFFFFF800, 0xFFFFFFFFFFFFFC00, 0xDEADBEEF12345678, 65520, 65519,
               0x0123456789ABCDEF, 0xFF7F0080C0DE0181]
FROM_KINDS = ["s8", "u8", "s16", "u16", "s32", "u32", "s64", "u64"]
MODES = ["rn", "rz", "rm", "rp"]


def _source(kind: str, fmt: str = "") -> str:
    """The register holding the kind operand: 64-bit %wab, else %a (wider: read truncated, the PTX rule); to
    bfloat16 (ptxas takes no wider register there) a 16-bit kind from %h1, a's low half."""
    return "%wab" if kind.endswith("64") else "%h1" if fmt == "bf16" and kind.endswith("16") else "%a"


def _int_value(word64: int, kind: str) -> int:
    width = int(kind[1:])
    v = word64 & ((1 << width) - 1)
    return v - (1 << width) if kind[0] == "s" and v >> (width - 1) else v


def _from_int_case(kinds: list[str], formats: list[str]) -> tuple:
    """cvt.<mode>.<fmt>.<kind> of each 64-bit word's kind value, every mode: (body, outputs, (A, B, C), rows)."""
    body, k, columns = [], 0, []
    for kind in kinds:
        for fmt in formats:
            for mode in MODES:
                if fmt == "f64":
                    body.append(f"  cvt.{mode}.f64.{kind} %d1, {_source(kind)}; mov.b64 {{%o{k}, %o{k + 1}}}, %d1;")
                    k += 2
                elif fmt == "f32":
                    body.append(f"  cvt.{mode}.f32.{kind} %f1, {_source(kind)}; mov.b32 %o{k}, %f1;")
                    k += 1
                else:
                    body.append(f"  cvt.{mode}.{fmt}.{kind} %h2, {_source(kind, fmt)}; cvt.u32.u16 %o{k}, %h2;")
                    k += 1
                columns.append((kind, fmt, mode))
    rows = []
    for w in INT_WORDS64:
        row = []
        for kind, fmt, mode in columns:
            v = _int_value(w, kind)
            bits = rounded_bits(Fraction(v), v < 0, fmt, mode)
            row += words64(bits) if fmt == "f64" else [bits]
        rows.append(row)
    a, b = [w & M32 for w in INT_WORDS64], [w >> 32 for w in INT_WORDS64]
    return "  cvt.u16.u32 %h1, %a;\n" + "\n".join(body), k, (a, b, [0] * len(a)), rows


def _float_float_case(source: str, words: list[int], targets: list[tuple[str, str]]) -> tuple:
    """cvt[.mode].<fmt>.<source> of each word: targets are (fmt, PTX rounding or '' for an exact widening)."""
    reg = {"f64": "%dab", "f32": "%fa", "f16": "%h1", "bf16": "%h1"}[source]
    body = ["  cvt.u16.u32 %h1, %a;"] if source in ("f16", "bf16") else []
    k = 0
    for fmt, mode in targets:
        spelled = f"cvt.{mode}.{fmt}.{source}" if mode else f"cvt.{fmt}.{source}"
        if fmt == "f64":
            body.append(f"  {spelled} %d1, {reg}; mov.b64 {{%o{k}, %o{k + 1}}}, %d1;")
            k += 2
        elif fmt == "f32":
            body.append(f"  {spelled} %f1, {reg}; mov.b32 %o{k}, %f1;")
            k += 1
        else:
            body.append(f"  {spelled} %h2, {reg}; cvt.u32.u16 %o{k}, %h2;")
            k += 1
    rows = []
    for w in words:
        x = value(w, source)
        row = []
        for fmt, mode in targets:
            bits = convert_float(x, fmt, mode or "rn")
            row += words64(bits) if fmt == "f64" else [bits]
        rows.append(row)
    if source == "f64":
        a, b = [w & M32 for w in words], [w >> 32 for w in words]
    else:
        a, b = list(words), [0] * len(words)
    return "\n".join(body), k, (a, b, [0] * len(a)), rows


SAT_PAIRS = [(d, s) for s in ("s16", "u16", "s32", "u32", "s64", "u64") for d in INT_KINDS if d != s]


def _int_int_case(sat: bool) -> tuple:
    """cvt[.sat].<dest>.<source> of each 64-bit word's source value into a 32-bit (64-bit) register: clamped (with
    .sat) or the low bits (without), then widened by the destination type's sign (the PTX rule)."""
    body, k = [], 0
    # .sat only where the destination's range does not hold the source's (ptxas refuses it elsewhere)
    pairs = [p for p in SAT_PAIRS if (sat and not (INTS[p[0]][0] <= INTS[p[1]][0] and INTS[p[1]][1] <= INTS[p[0]][1]))
             or (not sat and int(p[0][1:]) < int(p[1][1:]))]
    for d, s in pairs:
        spelled = f"cvt{'.sat' if sat else ''}.{d}.{s}"
        src = "%wab" if s.endswith("64") else "%a" if s.endswith("32") else "%h1"
        if d.endswith("64"):
            body.append(f"  {spelled} %w1, {src}; mov.b64 {{%o{k}, %o{k + 1}}}, %w1;")
            k += 2
        else:
            body.append(f"  {spelled} %o{k}, {src};")
            k += 1
    rows = []
    for w in INT_WORDS64:
        row = []
        for d, s in pairs:
            v = _int_value(w, s)
            low, high = INTS[d]
            r = min(max(v, low), high) if sat else _int_value(v & M64, d)
            row += words64(r & M64) if d.endswith("64") else [r & M32]
        rows.append(row)
    a, b = [w & M32 for w in INT_WORDS64], [w >> 32 for w in INT_WORDS64]
    return "  cvt.u16.u32 %h1, %a;\n" + "\n".join(body), k, (a, b, [0] * len(a)), rows


# ----------------------------------------------------------------- binary64 arithmetic in the directed roundings
F64_PAIRS = [(1.0, 2.0 ** -53), (1.0, -(2.0 ** -54)), (-1.0, -(2.0 ** -53) - 2.0 ** -80), (1e308, 1e308),
             (-1e308, -1e308), (2.0 ** -1074, 0.5), (3.0, 1.0 / 3.0), (-3.0, 1.0 / 3.0), (0.1, 0.2), (1.0, -1.0),
             (-0.0, 0.0), (2.0 ** 1023, 1.5), (2.0 ** -1022, 0.5), (2.0 ** -1022, -(2.0 ** -1074)),
             (1.0 + 2.0 ** -52, 1.0 - 2.0 ** -53), (7.0, 1.0 / 7.0), (1.7976931348623157e308, -1.7976931348623157e308),
             (math.inf, 1.0), (-math.inf, math.inf), (math.nan, 1.0), (5e-324, -5e-324), (2.0 ** -537, 2.0 ** -537),
             (-(2.0 ** -538), 2.0 ** -537), (1.0 / 3.0, 3.0)]


def _f64_exact(op: str, x: float, y: float, mode: str):
    """add / mul .<mode>.f64 of x, y and fma .<mode>.f64 of x, y, x: the exact result rounded once (IEEE 754), a
    non-finite operand's result through NumPy (exact: no rounding), an exact zero's sign by IEEE 754 6.3."""
    z = x
    terms = (x, y) if op != "fma" else (x, y, z)
    if not all(math.isfinite(v) for v in terms):
        with np.errstate(all="ignore"):
            r = {"add": lambda: np.float64(x) + np.float64(y), "mul": lambda: np.float64(x) * np.float64(y),
                 "fma": lambda: np.float64(x) * np.float64(y) + np.float64(z)}[op]()
        return NAN64_HI if math.isnan(r) else int(np.array([r], np.float64).view(np.uint64)[0])
    product_negative = (math.copysign(1, x) * math.copysign(1, y)) < 0
    if op == "add":
        exact, signs = Fraction(x) + Fraction(y), (math.copysign(1, x) < 0, math.copysign(1, y) < 0)
    elif op == "mul":
        exact, signs = Fraction(x) * Fraction(y), (product_negative, product_negative)
    else:
        exact, signs = Fraction(x) * Fraction(y) + Fraction(z), (product_negative, math.copysign(1, z) < 0)
    if exact == 0:
        negative = signs[0] if signs[0] == signs[1] else mode == "rm"
        return rounded_bits(exact, negative, "f64", mode)
    return rounded_bits(exact, exact < 0, "f64", mode)


def _f64_case() -> tuple:
    xs, ys = [p[0] for p in F64_PAIRS], [p[1] for p in F64_PAIRS]
    # thread i: x = b:a (binary64), y = C's binary64 at rows 2i, 2i + 1 -- C is twice as long: the kernel reads it
    # as a 64-bit word at 8 i
    body, k, columns = ["  mul.wide.u32 %rd10, %i, 8; add.s64 %rd11, %rd3, %rd10; ld.global.f64 %d2, [%rd11];"], 0, []
    for op in ("add", "mul", "fma"):
        for mode in MODES:
            expr = {"add": f"add.{mode}.f64 %d3, %dab, %d2;", "mul": f"mul.{mode}.f64 %d3, %dab, %d2;",
                    "fma": f"fma.{mode}.f64 %d3, %dab, %d2, %dab;"}[op]
            body.append(f"  {expr} mov.b64 {{%o{k}, %o{k + 1}}}, %d3;")
            k += 2
            columns.append((op, mode))
    rows = [[w for op, mode in columns for w in words64(_f64_exact(op, x, y, mode))] for x, y in zip(xs, ys)]
    bits = np.array(xs, np.float64).view(np.uint64).tolist()
    c = np.array(ys, np.float64).view(np.uint32).tolist()
    return "\n".join(body), k, ([w & M32 for w in bits], [w >> 32 for w in bits], c), rows


# ----------------------------------------------------------------- 64-bit and scoped atomics
ATOM_WORDS = [(0, 1), (M64, 1), (1 << 63, (1 << 63) - 1), ((1 << 63) - 1, 1 << 63), (0x00000000FFFFFFFF, 1),
              (5, M64), (0xDEADBEEF12345678, 0x0123456789ABCDEF), (M64, M64), (1 << 32, (1 << 32) - 1),
              (0x8000000000000001, 0x8000000000000002)]
ATOM_OPS = ["add.u64", "min.s64", "max.s64", "min.u64", "max.u64", "and.b64", "or.b64", "xor.b64", "exch.b64",
            "cas.b64"]


def _s64(v: int) -> int:
    return v - (1 << 64) if v >> 63 else v


def _atom(op: str, old: int, x: int) -> int:
    """The word after PTX atom.<op> of x on old (cas: _atomic_case's own)."""
    kind = op.split(".")[0]
    return {"add": (old + x) & M64, "min.s64": min(_s64(old), _s64(x)) & M64, "max.s64": max(_s64(old), _s64(x)) & M64,
            "min.u64": min(old, x), "max.u64": max(old, x), "and": old & x, "or": old | x, "xor": old ^ x,
            "exch": x}[op if kind in ("min", "max") else kind]


def _atomic_case(space: str) -> tuple:
    """atom.<space>[.scope].<op> of x (C's 64-bit word at 8 i) on a word holding b:a (thread i's own), each op with
    its own word: the old value and the word after.  cas compares with the old value's bits with bit 0 cleared."""
    body, k = ["  mul.wide.u32 %rd10, %i, 8; add.s64 %rd11, %rd3, %rd10; ld.global.b64 %w2, [%rd11];",
               "  and.b64 %w3, %wab, -2;"], 0
    scopes = {"add.u64": ".relaxed.gpu", "min.s64": ".acq_rel.cta", "max.s64": ".sys", "exch.b64": ".acquire.gpu",
              "cas.b64": ".release.sys"}
    for j, op in enumerate(ATOM_OPS):
        sem = scopes.get(op, "")
        if space == "shared":
            body.append(f"  mov.u32 %r1, sm; mul.lo.u32 %r2, %i, {8 * len(ATOM_OPS)}; add.u32 %r1, %r1, %r2; "
                        f"add.u32 %r1, %r1, {8 * j}; cvt.u64.u32 %rd13, %r1; st.shared.b64 [%rd13], %wab;")
            addr = "%rd13"
            spelled = f"atom{sem}.shared"
        else:
            body.append(f"  add.s64 %rd12, %rd5, {4 * (k + 2)}; st.global.b64 [%rd12], %wab;")
            addr = "%rd12"
            spelled = f"atom{sem}.global"
        operands = "%w3, %w2" if op == "cas.b64" else "%w2"
        body.append(f"  {spelled}.{op} %w4, [{addr}], {operands}; mov.b64 {{%o{k}, %o{k + 1}}}, %w4;")
        if space == "shared":
            body.append(f"  ld.shared.b64 %w5, [{addr}]; mov.b64 {{%o{k + 2}, %o{k + 3}}}, %w5;")
        else:
            body.append(f"  ld.global.b64 %w5, [{addr}]; mov.b64 {{%o{k + 2}, %o{k + 3}}}, %w5;")
        k += 4
    rows = []
    for start, x in ATOM_WORDS:
        row = []
        for op in ATOM_OPS:
            if op == "cas.b64":
                new = x if start == start & ~1 & M64 else start
            else:
                new = _atom(op, start, x)
            row += words64(start) + words64(new)
        rows.append(row)
    a, b = [s & M32 for s, _ in ATOM_WORDS], [s >> 32 for s, _ in ATOM_WORDS]
    c = np.array([x for _, x in ATOM_WORDS], np.uint64).view(np.uint32).tolist()
    return "\n".join(body), k, (a, b, c), rows


def _memory_hints_case() -> tuple:
    """.v2 / .v4 loads and stores with each cache hint (LDG.E.64 / .128 .CONSTANT / .EF / .LU / .STRONG.SYS ...):
    thread i copies A's aligned pair and quad that hold word i, and C's word i through a .cs / .wt / .cg store.
    Expected: the words themselves."""
    body = ["  and.b32 %r1, %i, -2; mul.wide.u32 %rd10, %r1, 4; add.s64 %rd11, %rd1, %rd10;",
            "  and.b32 %r2, %i, -4; mul.wide.u32 %rd12, %r2, 4; add.s64 %rd13, %rd1, %rd12;"]
    k = 0
    for hint in ("nc", "cs", "lu", "cv", "ca", "cg"):
        body.append(f"  ld.global.{hint}.v2.u32 {{%o{k}, %o{k + 1}}}, [%rd11];")
        body.append(f"  ld.global.{hint}.v4.u32 {{%o{k + 2}, %o{k + 3}, %o{k + 4}, %o{k + 5}}}, [%rd13];")
        k += 6
    body.append(f"  ld.global.nc.L1::no_allocate.v2.u32 {{%o{k}, %o{k + 1}}}, [%rd11];")
    k += 2
    for hint in ("cs", "wt", "cg", "wb"):
        body.append(f"  add.s64 %rd14, %rd5, {4 * k}; st.global.{hint}.u32 [%rd14], %c; "
                    f"ld.global.cv.u32 %o{k}, [%rd14];")
        k += 1
    n = 32
    a = [(0x9E3779B9 * (i + 1)) & M32 for i in range(n)]
    c = [(0x7F4A7C15 * (i + 3)) & M32 for i in range(n)]
    rows = [[a[i & ~1], a[(i & ~1) + 1], *a[i & ~3:(i & ~3) + 4]] * 6 + [a[i & ~1], a[(i & ~1) + 1]] + [c[i]] * 4
            for i in range(n)]
    return "\n".join(body), k, (a, [0] * n, c), rows


def _bfind_case() -> tuple:
    """bfind.s64 / bfind.shiftamt.s64 / clz.b64 / popc.b64 / brev.b64 of b:a (FLO.U32 of a complemented source, FLO
    .SH, POPC / BREV pairs); bfind.s64: the highest bit unlike the sign bit, 0xffffffff when none (PTX ISA)."""
    body = ("  bfind.s64 %o0, %wab; bfind.shiftamt.s64 %o1, %wab; clz.b64 %o2, %wab; popc.b64 %o3, %wab;\n"
            "  brev.b64 %w1, %wab; mov.b64 {%o4, %o5}, %w1; bfind.u64 %o6, %wab;")
    rows = []
    for w in INT_WORDS64:
        m = ~w & M64 if w >> 63 else w
        position = m.bit_length() - 1 if m else M32
        brev = int(f"{w:064b}"[::-1], 2)
        rows.append([position, M32 if position == M32 else 63 - position, 64 - w.bit_length(), bin(w).count("1"),
                     brev & M32, brev >> 32, w.bit_length() - 1 if w else M32])
    a, b = [w & M32 for w in INT_WORDS64], [w >> 32 for w in INT_WORDS64]
    return body, 7, (a, b, [0] * len(a)), rows


def _atomic_f64_case() -> tuple:
    """atom.global.add.f64 and atom.shared.add.f64 (ATOMG.E.ADD.F64.FTZ.RN / ATOMS ... CAS loop): round to nearest even,
    subnormals kept (PTX ISA: atom.add.f64), old value and the word after."""
    pairs = [(1.0, 2.0 ** -53), (1.0, 3 * 2.0 ** -54), (2.0 ** -1074, 2.0 ** -1074), (-0.0, 0.0), (-0.0, -0.0),
             (1e308, 1e308), (math.inf, -math.inf), (0.1, 0.2), (-(2.0 ** -1022), 2.0 ** -1074), (5.0, -5.0),
             (math.nan, 1.0), (2.0 ** 53, 1.0)]
    body = ["  mul.wide.u32 %rd10, %i, 8; add.s64 %rd11, %rd3, %rd10; ld.global.f64 %d2, [%rd11];",
            "  add.s64 %rd12, %rd5, 8; st.global.f64 [%rd12], %dab; atom.global.add.f64 %d3, [%rd12], %d2;",
            "  mov.b64 {%o0, %o1}, %d3; ld.global.b64 %w5, [%rd12]; mov.b64 {%o2, %o3}, %w5;",
            "  mov.u32 %r1, sm; shl.b32 %r2, %i, 3; add.u32 %r1, %r1, %r2; cvt.u64.u32 %rd13, %r1;",
            "  st.shared.f64 [%rd13], %dab; atom.shared.add.f64 %d4, [%rd13], %d2; mov.b64 {%o4, %o5}, %d4;",
            "  ld.shared.b64 %w6, [%rd13]; mov.b64 {%o6, %o7}, %w6;"]
    rows = []
    for x, y in pairs:
        old = int(np.array([x], np.float64).view(np.uint64)[0])
        new = words64(_f64_exact("add", x, y, "rn"))
        rows.append(words64(old) + new + words64(old) + new)
    bits = np.array([p[0] for p in pairs], np.float64).view(np.uint64).tolist()
    c = np.array([p[1] for p in pairs], np.float64).view(np.uint32).tolist()
    return "\n".join(body), 8, ([w & M32 for w in bits], [w >> 32 for w in bits], c), rows


def _collectives_case() -> tuple:
    """bar.red.popc.u32 / .and.pred / .or.pred over the block (BAR.RED), vote.sync.all / .any / .ballot, match.any.sync
    .b32 / .b64 and match.all.sync.b32 (MATCH) over each warp, %laneid, on two warps: p = a's bit 0 (warp 1's all set,
    so .all differs between the warps), match on a & 3 (and c as the high word), match.all on c (warp 0's all equal).
    PTX ISA: popc the count of threads with p, .and / .or of every thread's p; ballot bit l lane l's p; match.any the
    lanes whose value equals this lane's, match.all every lane's mask and true when all are equal, else 0 and false."""
    n = 64
    a = [((i * 2654435761) >> 3) & M32 | (1 if i >= 32 else 0) for i in range(n)]
    c = [7] * 32 + [i % 3 for i in range(32, n)]
    body = """  and.b32 %r1, %a, 1; setp.ne.u32 %p1, %r1, 0;
  bar.red.popc.u32 %o0, 0, %p1; bar.red.and.pred %p2, 0, %p1; selp.u32 %o1, 1, 0, %p2;
  bar.red.or.pred %p3, 0, %p1; selp.u32 %o2, 1, 0, %p3;
  vote.sync.all.pred %p4, %p1, -1; selp.u32 %o3, 1, 0, %p4; vote.sync.any.pred %p5, %p1, -1; selp.u32 %o4, 1, 0, %p5;
  vote.sync.ballot.b32 %o5, %p1, -1;
  and.b32 %r2, %a, 3; match.any.sync.b32 %o6, %r2, -1; match.all.sync.b32 %o7|%p7, %c, -1; selp.u32 %o8, 1, 0, %p7;
  mov.b64 %w1, {%r2, %c}; match.any.sync.b64 %o9, %w1, -1; mov.u32 %o10, %laneid;"""
    p = [x & 1 for x in a]
    rows = []
    for i in range(n):
        w = range(i // 32 * 32, i // 32 * 32 + 32)
        ballot = sum(p[j] << (j % 32) for j in w)
        same = sum(1 << (j % 32) for j in w if a[j] & 3 == a[i] & 3)
        same64 = sum(1 << (j % 32) for j in w if a[j] & 3 == a[i] & 3 and c[j] == c[i])
        uniform = all(c[j] == c[i] for j in w)
        rows.append([sum(p), int(all(p)), int(any(p)), int(all(p[j] for j in w)), int(any(p[j] for j in w)), ballot,
                     same, M32 if uniform else 0, int(uniform), same64, i % 32])
    return body, 11, (a, [0] * n, c), rows


def _lanes_case() -> tuple:
    """%lanemask_eq / _lt / _le / _gt / _ge (S2R SR_EQMASK ... SR_GEMASK) and vote.sync.uni.pred of p and of !p
    (VOTE.EQ),
    two warps, p = a's bit 0 (warp 1's all set).  PTX ISA: the masks of the warp's lanes equal to, below, at or below,
    above, at or above this one; vote.uni true when every active lane's predicate is the same."""
    n = 64
    a = [((i * 2654435761) >> 3) & M32 | (1 if i >= 32 else 0) for i in range(n)]
    body = """  and.b32 %r1, %a, 1; setp.ne.u32 %p1, %r1, 0;
  mov.u32 %o0, %lanemask_eq; mov.u32 %o1, %lanemask_lt; mov.u32 %o2, %lanemask_le; mov.u32 %o3, %lanemask_gt;
  mov.u32 %o4, %lanemask_ge;
  vote.sync.uni.pred %p2, %p1, -1; selp.u32 %o5, 1, 0, %p2;
  vote.sync.uni.pred %p3, !%p1, -1; selp.u32 %o6, 1, 0, %p3;"""
    rows = []
    for i in range(n):
        lane, w = i % 32, range(i // 32 * 32, i // 32 * 32 + 32)
        uni = int(len({a[j] & 1 for j in w}) == 1)
        rows.append([1 << lane, (1 << lane) - 1, (2 << lane) - 1, M32 & ~((2 << lane) - 1), M32 & ~((1 << lane) - 1),
                     uni, uni])
    return body, 7, (a, [0] * n, [0] * n), rows


def _bfe(a: int, pos: int, length: int, bits: int, signed: bool) -> int:
    """PTX bfe's pseudocode: msb = bits - 1, pos = b & 0xff, len = c & 0xff; sbit a[min(pos + len - 1, msb)] when
    signed (0 for len 0), else 0; d[i] = a[pos + i] for i < len and pos + i <= msb, else sbit."""
    msb, pos, length = bits - 1, pos & 0xFF, length & 0xFF
    sbit = (a >> min(pos + length - 1, msb)) & 1 if signed and length else 0
    return sum(((a >> (pos + i)) & 1 if i < length and pos + i <= msb else sbit) << i for i in range(bits))


def _bfi(a: int, b: int, pos: int, length: int, bits: int) -> int:
    """PTX bfi: f = b; f[pos + i] = a[i] for i < len and pos + i <= msb (pos = c & 0xff, len = d & 0xff)."""
    f, pos, length = b, pos & 0xFF, length & 0xFF
    for i in range(length):
        if pos + i > bits - 1:
            break
        f = f & ~(1 << (pos + i)) | ((a >> i) & 1) << (pos + i)
    return f


def _bits_case() -> tuple:
    """bfe.u64 / .s64 and bfi.b64 (pos, len from c's bytes 0 and 1), bfe.s32 / bfi.b32 past msb, mul.hi.u64 / .s64,
    mad.hi.u64 (+ b:a), testp .finite / .infinite / .number / .notanumber / .normal / .subnormal .f64 and .f32 (of a;
    PTX ISA, testp: "positive and negative zero are considered normal numbers"), copysign.f64 / .f32 (b:a's sign onto
    1.5, a's onto c)."""
    body = """  and.b32 %r1, %c, 255; shr.u32 %r2, %c, 8; and.b32 %r2, %r2, 255;
  bfe.u64 %w1, %wab, %r1, %r2; mov.b64 {%o0, %o1}, %w1; bfe.s64 %w2, %wab, %r1, %r2; mov.b64 {%o2, %o3}, %w2;
  mov.b64 %w3, {%c, %a}; bfi.b64 %w4, %w3, %wab, %r1, %r2; mov.b64 {%o4, %o5}, %w4;
  bfe.s32 %o6, %a, %r1, %r2; bfi.b32 %o7, %c, %a, %r1, %r2;
  mul.hi.u64 %w5, %wab, %w3; mov.b64 {%o8, %o9}, %w5; mul.hi.s64 %w6, %wab, %w3; mov.b64 {%o10, %o11}, %w6;
  mad.hi.u64 %w7, %wab, %w3, %wab; mov.b64 {%o12, %o13}, %w7;
  testp.finite.f64 %p1, %dab; selp.u32 %o14, 1, 0, %p1; testp.infinite.f64 %p1, %dab; selp.u32 %o15, 1, 0, %p1;
  testp.number.f64 %p1, %dab; selp.u32 %o16, 1, 0, %p1; testp.notanumber.f64 %p1, %dab; selp.u32 %o17, 1, 0, %p1;
  testp.normal.f64 %p1, %dab; selp.u32 %o18, 1, 0, %p1; testp.subnormal.f64 %p1, %dab; selp.u32 %o19, 1, 0, %p1;
  testp.normal.f32 %p1, %fa; selp.u32 %o20, 1, 0, %p1; testp.subnormal.f32 %p1, %fa; selp.u32 %o21, 1, 0, %p1;
  testp.notanumber.f32 %p1, %fa; selp.u32 %o22, 1, 0, %p1; testp.infinite.f32 %p1, %fa; selp.u32 %o23, 1, 0, %p1;
  mov.f64 %d1, 0d3FF8000000000000; copysign.f64 %d2, %dab, %d1; mov.b64 {%o24, %o25}, %d2;
  mov.b32 %f1, %c; copysign.f32 %f2, %fa, %f1; mov.b32 %o26, %f2;"""
    pairs = [(w & M32, w >> 32) for w in F64_WORDS]
    extra = [(0x00000001, 0x80000000), (0x7F800000, 0), (0x80000000, 0x7F800001), (0x00400000, 0x00000000),
             (0xFF800000, 0xFFF00000)]
    pairs += extra
    n = len(pairs)
    cs = [((i * 7) % 70) | ((i * 13) % 70) << 8 | 0xA500000 for i in range(n)]
    rows = []
    for (a, b), c in zip(pairs, cs):
        x, y = b << 32 | a, a << 32 | c
        pos, length = c & 0xFF, (c >> 8) & 0xFF
        sx, sy = _s64(x), _s64(y)
        d = value(x, "f64")
        f = value(a, "f32")

        def finite(v):
            return math.isfinite(v)
        e64, e32 = (x >> 52) & 0x7FF, (a >> 23) & 0xFF
        copy64 = (x & (1 << 63)) | 0x3FF8000000000000
        copy32 = (a & 0x80000000) | (c & 0x7FFFFFFF)
        row = [*words64(_bfe(x, pos, length, 64, False)), *words64(_bfe(x, pos, length, 64, True)),
               *words64(_bfi(y, x, pos, length, 64)), _bfe(a, pos, length, 32, True) & M32,
               _bfi(c, a, pos, length, 32), *words64((x * y) >> 64), *words64(((sx * sy) >> 64) & M64),
               *words64((((x * y) >> 64) + x) & M64),
               int(finite(d)), int(math.isinf(d)), int(not math.isnan(d)), int(math.isnan(d)),
               int(0 < e64 < 0x7FF or d == 0), int(e64 == 0 and x & ((1 << 52) - 1) != 0),
               int(0 < e32 < 0xFF or f == 0), int(e32 == 0 and a & 0x7FFFFF != 0), int(math.isnan(f)),
               int(math.isinf(f)),
               *words64(copy64), copy32]
        rows.append(row)
    a_, b_ = [p[0] for p in pairs], [p[1] for p in pairs]
    return body, 27, (a_, b_, cs), rows


def _integral(x: float, mode: str):
    """cvt.<rni|rzi|rmi|rpi>.f64.f64 (FRND.F64): x rounded to an integral value (IEEE 754 5.3.1: a zero result keeps
    x's sign, infinities stay, a NaN a NaN)."""
    if math.isnan(x):
        return NAN64_HI
    if math.isinf(x):
        return int(np.array([x], np.float64).view(np.uint64)[0])
    r = float(round_integral(x, mode))
    r = math.copysign(r, x) if r == 0 else r
    return int(np.array([r], np.float64).view(np.uint64)[0])


def _flushed(bits, fmt: str):
    """A subnormal result of fmt (a Nan pattern passes) flushed to the zero of its sign (.ftz)."""
    if not isinstance(bits, int):
        return bits
    ebits, mbits = FORMATS[fmt]
    if (bits >> mbits) & ((1 << ebits) - 1) == 0:
        return bits & (1 << ebits + mbits)
    return bits


def _saturated(x: float, fmt: str, mode: str):
    """.sat: the result clamped to [0.0, 1.0], a NaN +0 (PTX ISA, cvt); a -0 result OPEN (the GPU's .SAT made -0 +0 in
    session 45 for FADD / HADD2; the ISA's clamp does not say), else rounded by mode."""
    if math.isnan(x):
        return 0
    if x == 0 and math.copysign(1, x) < 0 or -1 < x < 0 and mode in ("rz", "rp"):
        return OPEN
    return convert_float(min(max(x, 0.0), 1.0), fmt, mode)


def _pair(v) -> list:
    return [OPEN, OPEN] if v is OPEN else words64(v)


def _float_rounding_case() -> tuple:
    """FRND.F64 (cvt.rni / rzi / rmi / rpi .f64.f64), .ftz and .sat conversions: cvt.rn / rm .ftz.f32.f64 (a subnormal
    binary32 result a zero of its sign), cvt.rn.sat.f32.f64, cvt.rz.sat.f16.f64, cvt.ftz.f64.f32 (a subnormal operand a
    zero of its sign), cvt.sat.f64.f32, cvt.rn.sat.f16.f32 and cvt.sat.f32.f16 (of a's low half)."""
    body = """  cvt.rni.f64.f64 %d1, %dab; cvt.rzi.f64.f64 %d2, %dab;
  cvt.rmi.f64.f64 %d3, %dab; cvt.rpi.f64.f64 %d4, %dab;
  mov.b64 {%o0, %o1}, %d1; mov.b64 {%o2, %o3}, %d2; mov.b64 {%o4, %o5}, %d3; mov.b64 {%o6, %o7}, %d4;
  cvt.rn.ftz.f32.f64 %f1, %dab; mov.b32 %o8, %f1; cvt.rn.sat.f32.f64 %f2, %dab; mov.b32 %o9, %f2;
  cvt.rz.sat.f16.f64 %h1, %dab; cvt.u32.u16 %o10, %h1;
  cvt.ftz.f64.f32 %d5, %fa; mov.b64 {%o11, %o12}, %d5; cvt.sat.f64.f32 %d6, %fa; mov.b64 {%o13, %o14}, %d6;
  cvt.rn.sat.f16.f32 %h2, %fa; cvt.u32.u16 %o15, %h2; cvt.u16.u32 %h3, %a; cvt.sat.f32.f16 %f3, %h3; mov.b32 %o16, %f3;
  cvt.rm.ftz.f32.f64 %f4, %dab; mov.b32 %o17, %f4;"""
    words = F64_WORDS + [0x3FEFFFFFFFFFFFFF, 0x3FF0000000000001, 0xBFD0000000000000, 0x0000000080000001,
                         0x3E9FFFFFF0000000, 0xB6A0000000000000, 0x36A0000000000001]
    rows = []
    for w in words:
        x, a = value(w, "f64"), w & M32
        f, h = value(a, "f32"), value(a & 0xFFFF, "f16")
        wide = (0 if math.copysign(1, f) > 0 else 1 << 63) if (a >> 23) & 0xFF == 0 else \
            (NAN64_HI if math.isnan(f) else int(np.array([f], np.float64).view(np.uint64)[0]))
        rows.append([*words64(_integral(x, "rni")), *words64(_integral(x, "rzi")), *words64(_integral(x, "rmi")),
                     *words64(_integral(x, "rpi")), _flushed(convert_float(x, "f32", "rn"), "f32"),
                     _saturated(x, "f32", "rn"), _saturated(x, "f16", "rz"), *words64(wide),
                     *_pair(_saturated(f, "f64", "rn")), _saturated(f, "f16", "rn"), _saturated(h, "f32", "rn"),
                     _flushed(convert_float(x, "f32", "rm"), "f32")])
    return body, 18, ([w & M32 for w in words], [w >> 32 for w in words], [0] * len(words)), rows


def cases() -> dict:
    """name -> (body, outputs, (A, B, C), expected rows, targets, shared bytes)."""
    both, hopper = ("sm_86", "sm_90"), ("sm_90",)
    out = {}
    for fmt, words, junk in (("f32", F32_WORDS, 0), ("f64", F64_WORDS, 0), ("f16", HALF_WORDS, 0xBEEF0000)):
        out[f"s46_{fmt}_to_int"] = (*_to_int_case(fmt, words, junk), both, 0)
    out["s46_bf16_to_int"] = (*_to_int_case("bf16", BF16_WORDS, 0x5A5A0000), hopper, 0)
    out["s46_narrow_int_to_float"] = (*_from_int_case(["s8", "u8", "s16", "u16"], ["f16", "f32", "f64"]), both, 0)
    out["s46_int32_to_float"] = (*_from_int_case(["s32", "u32"], ["f16", "f32", "f64"]), both, 0)
    out["s46_int64_to_float"] = (*_from_int_case(["s64", "u64"], ["f16", "f32", "f64"]), both, 0)
    out["s46_int_to_bf16"] = (*_from_int_case(["s16", "u16", "s32", "u32", "s64", "u64"], ["bf16"]), hopper, 0)
    out["s46_f64_to_narrow"] = (*_float_float_case("f64", F64_WORDS, [(f, m) for f in ("f32", "f16") for m in MODES]),
                                both, 0)
    out["s46_f64_to_bf16"] = (*_float_float_case("f64", F64_WORDS, [("bf16", m) for m in MODES]), hopper, 0)
    out["s46_f32_to_wide"] = (*_float_float_case("f32", F32_WORDS, [("f64", ""), ("bf16", "rn")]), both, 0)
    out["s46_f16_to_wide"] = (*_float_float_case("f16", HALF_WORDS, [("f32", ""), ("f64", "")]), both, 0)
    out["s46_bf16_to_wide"] = (*_float_float_case("bf16", BF16_WORDS, [("f32", ""), ("f64", "")]), hopper, 0)
    out["s46_int_sat"] = (*_int_int_case(True), both, 0)
    out["s46_int_narrow"] = (*_int_int_case(False), both, 0)
    out["s46_f64_roundings"] = (*_f64_case(), both, 0)
    out["s46_bit_counts64"] = (*_bfind_case(), both, 0)
    out["s46_memory_hints"] = (*_memory_hints_case(), both, 0)
    out["s46_collectives"] = (*_collectives_case(), both, 0)
    out["s46_lanes"] = (*_lanes_case(), both, 0)
    out["s46_bits64"] = (*_bits_case(), both, 0)
    # sm_86: ptxas's code reads a binary64 constant from bank 2 (DSETP.GEU ... |R4|, c[0x2][0x0]), which run_kernel
    # refused by name ("reads constant bank 2") before probe s46 gpuprobes46; sm_90's does not
    out["s46_float_rounding"] = (*_float_rounding_case(), both, 0)
    out["s46_atomics64_global"] = (*_atomic_case("global"), both, 0)
    out["s46_atomics64_shared"] = (*_atomic_case("shared"), both, 8 * len(ATOM_OPS) * len(ATOM_WORDS))
    out["s46_atomic_add_f64"] = (*_atomic_f64_case(), both, 8 * 16)
    return out


CASES = cases()


def ptx(name: str, target: str) -> str:
    body, outputs, _, _, _, shared = CASES[name]
    return _ptx(body, outputs, target, shared)


def sm90_cases() -> dict:
    """name -> (PTX for sm_90, (A, B, C) words, expected rows (ints or Nan patterns)): every case, for
    tests/gpu/test_sim_probes_gpu.py (ptxas's cubins and the simulator's words by tests/gpu/prepare.sh)."""
    return {name: (ptx(name, "sm_90"), case[2], case[3]) for name, case in CASES.items()}


# cases the simulator refuses by name: none since probe s47 simgaps2 (64-bit atomics -- ATOMG .64 / .ADD.F64, ATOMS .64
# and ATOMS.CAST.SPIN.64, s46_atomics64_global / _shared and s46_atomic_add_f64 -- were refused before, the GPU running
# them against the PTX oracle above alone); kept for a case the simulator cannot run
REFUSED: set = set()
# cases whose ptxas code bobc's assembler cannot encode yet (no sm_90 form of ATOMG.E.MIN.S64.STRONG.SM -- the .cta
# scope's atom.min.s64 -- nor of LDG.E.NA.64.CONSTANT, ld.global.nc.L1::no_allocate.v2): the GPU runs ptxas's cubin
# alone (tests/gpu/test_sim_probes_gpu.py leaves bobc's out, so a clean run skips nothing)
BOBC_LACKS = {"s46_atomics64_global", "s46_memory_hints"}
RUNS = [(name, target) for name, case in CASES.items() for target in case[4]]


@pytest.mark.parametrize(("name", "target"), RUNS)
def test_simulator_stores_the_ptx_definition_s46(name, target):
    _, outputs, (a, b, c), rows, _, _ = CASES[name]
    if name in REFUSED:
        from bobc.sim.faults import Unmodeled
        with pytest.raises(Unmodeled, match=r"ATOM[GS]\.[A-Z0-9.]*64[A-Z.]* .*is not modeled"):
            simulate(ptx(name, target), target, a, b, c, outputs)
        return
    got = simulate(ptx(name, target), target, a, b, c, outputs)
    bad = faults(got, rows, a, b, c)
    assert not bad, f"{target} {name}: {len(bad)} words differ from the PTX ISA:\n" + "\n".join(bad[:24])


def test_the_oracle_by_hand_s46():
    """rounded_bits against values worked out by hand (not by the simulator): binary16's 2049 -> 2048 (a tie to even),
    2051 -> 2052, 65520 -> inf (rn) and 65504 (rz); binary32 of 2^24 + 1 -> 2^24 and rp 2^24 + 2; binary64 2^-1075
    (half the smallest subnormal) -> 0 (rn tie to even) and 2^-1074 (rp); bfloat16 of 1 + 2^-8 -> 1 (tie, even) and
    1 + 3 * 2^-9 -> 1 + 2^-7; float_to_int's clamps and rounding."""
    assert rounded_bits(Fraction(2049), False, "f16", "rn") == 0x6800
    assert rounded_bits(Fraction(2051), False, "f16", "rn") == 0x6802
    assert rounded_bits(Fraction(65520), False, "f16", "rn") == 0x7C00
    assert rounded_bits(Fraction(65520), False, "f16", "rz") == 0x7BFF
    assert rounded_bits(Fraction(-65520), True, "f16", "rp") == 0xFBFF
    assert rounded_bits(Fraction(2 ** 24 + 1), False, "f32", "rn") == 0x4B800000
    assert rounded_bits(Fraction(2 ** 24 + 1), False, "f32", "rp") == 0x4B800001
    assert rounded_bits(Fraction(1, 2 ** 1075), False, "f64", "rn") == 0
    assert rounded_bits(Fraction(1, 2 ** 1075), False, "f64", "rp") == 1
    assert rounded_bits(Fraction(3, 2 ** 1076), False, "f64", "rn") == 1
    assert rounded_bits(1 + Fraction(1, 256), False, "bf16", "rn") == 0x3F80
    assert rounded_bits(1 + Fraction(3, 512), False, "bf16", "rn") == 0x3F81
    assert float_to_int(-2.5, "s8", "rni") == -2 and float_to_int(2.5, "u8", "rpi") == 3
    assert float_to_int(-0.5, "u32", "rmi") == 0 and float_to_int(300.0, "s8", "rzi") == 127
    assert float_to_int(math.nan, "s16", "rni") == 0 and float_to_int(-math.inf, "s64", "rzi") == -2 ** 63
    assert _int_value(0xFF80, "s8") == -128 and _int_value(0x1FF, "u8") == 0xFF


# ----------------------------------------------------------------- warp-uniform operands (kernel parameters)
# Session 45's simint readings of uniform-datapath forms (tests/sim/test_uniform_integer_forms_s45.py): sm_90's
# UIMAD.WIDE(.U32) of two parameters, FLO.U32 of ~UR (clz / bfind of not.b32), bfind.s64 of a parameter pair, and the
# saturating sums sm_86 tests with PLOP3 on c[0x0][..].SIGN.  One thread a launch, the parameters the operands.
from tests.sim.test_uniform_integer_forms_s45 import _ptx as _param_ptx  # noqa: E402

PARAM_BODY = """  cvt.u64.u32 %w3, %c; mad.wide.s32 %w1, %a, %b, %w3; mad.wide.u32 %w2, %a, %b, %w3;
  mov.b64 {%o0, %o1}, %w1; mov.b64 {%o2, %o3}, %w2;
  not.b32 %o4, %a; clz.b32 %o5, %o4; bfind.u32 %o6, %o4;
  mov.b64 %w4, {%a, %b}; bfind.s64 %o7, %w4;
  add.sat.s32 %o8, %a, %b; sub.sat.s32 %o9, %a, %b; mad.hi.sat.s32 %o10, %a, %b, %c;"""
PARAM_OUTPUTS = 11
PARAM_ROWS = [(0, 0, 0), (M32, M32, M32), (0x80000000, M32, 1), (0x7FFFFFFF, 0x80000000, 0xDEADBEEF),
              (0x12345678, 0x9ABCDEF0, 0x0F0F0F0F), (0x7FFFFFFF, 1, 0), (0x80000000, 1, 0x80000000),
              (0x7FFFFFFF, 0x7FFFFFFF, 0x7FFFFFFF), (3, 0xFFFFFFFD, M32), (0xDEADBEEF, 0x7FFFFFFF, 5)]


def _s32(x: int) -> int:
    return x - (1 << 32) if x >> 31 else x


def param_expected(a: int, b: int, c: int) -> list[int]:
    """PTX mad.wide.s32 / .u32 (a * b + c exactly), not / clz / bfind.u32, bfind.s64 (the highest bit unlike the sign
    bit, 0xffffffff when none), add.sat / sub.sat / mad.hi.sat .s32 (the exact value clamped to [-2^31, 2^31 - 1])."""
    def clamp(v):
        return min(max(v, -2 ** 31), 2 ** 31 - 1) & M32
    signed, unsigned = (_s32(a) * _s32(b) + c) & M64, (a * b + c) & M64
    inverted = ~a & M32
    both = b << 32 | a
    magnitude = ~both & M64 if both >> 63 else both
    return [signed & M32, signed >> 32, unsigned & M32, unsigned >> 32, inverted, 32 - inverted.bit_length(),
            inverted.bit_length() - 1 if inverted else M32, magnitude.bit_length() - 1 if magnitude else M32,
            clamp(_s32(a) + _s32(b)), clamp(_s32(a) - _s32(b)), clamp((_s32(a) * _s32(b) >> 32) + _s32(c))]


def param_ptx(target: str) -> str:
    return _param_ptx(PARAM_BODY, PARAM_OUTPUTS).replace(".target sm_86", f".target {target}")


def simulate_params(target: str) -> np.ndarray:
    """[rows, outputs]: one launch of one thread a row."""
    cubin = compile_ptx(param_ptx(target), target)
    return np.array([run_kernel(cubin, target, grid=1, block=1, params=["out", *(np.uint32(x) for x in row)],
                                buffers={"out": np.zeros(PARAM_OUTPUTS, np.uint32)})["out"] for row in PARAM_ROWS])


@pytest.mark.parametrize("target", ["sm_86", "sm_90"])
def test_uniform_operands_store_the_ptx_definition_s46(target):
    got = simulate_params(target)
    a, b, c = zip(*PARAM_ROWS)
    bad = faults(got, [param_expected(*row) for row in PARAM_ROWS], a, b, c)
    assert not bad, f"{target}: {len(bad)} words differ from the PTX ISA:\n" + "\n".join(bad[:24])


# ----------------------------------------------------------------- the GPU probe's build and run (tests/gpu)
def build(folder, names=None) -> list[str]:
    """tests/gpu/prepare.sh's part: into `folder`, NAME.ptx, ptxas's NAME.ptxas.cubin (sm_90, -O3), nvdisasm's
    NAME.lst, bobc's NAME.bobc.cubin where its assembler has every form (the names it lacks one for are returned), and
    the simulator's words of ptxas's cubin, NAME.sim.npy (not for REFUSED); every case (and s46_uniform) by default."""
    import contextlib
    import io
    import subprocess

    from bobc.cli import main
    from bobc.nvtools import nvdisasm, ptxas
    folder = Path(folder)
    cases = {name: (case[0], case[1], case[2]) for name, case in sm90_cases().items()}
    cases["s46_uniform"] = (param_ptx("sm_90"), None, None)
    lacking = []
    for name in sorted(names or cases):
        text, words, rows = cases[name]
        (folder / f"{name}.ptx").write_text(text)
        cubin = folder / f"{name}.ptxas.cubin"
        subprocess.run([ptxas(), "-arch=sm_90", "-O3", str(folder / f"{name}.ptx"), "-o", str(cubin)], check=True)
        listing = subprocess.run([nvdisasm(), "-hex", str(cubin)], check=True, capture_output=True, text=True).stdout
        (folder / f"{name}.lst").write_text(listing)
        with contextlib.redirect_stderr(io.StringIO()), contextlib.redirect_stdout(io.StringIO()):
            if main(["asm", str(folder / f"{name}.lst"), "--arch", "sm_90", "--kernel", "k", "--cubin",
                     "-o", str(folder / f"{name}.bobc.cubin")]) != 0:
                lacking.append(name)
        if name == "s46_uniform":
            np.save(folder / f"{name}.sim.npy", simulate_params("sm_90"))
        elif name not in REFUSED:
            np.save(folder / f"{name}.sim.npy", simulate(text, "sm_90", *words, len(rows[0])))
    return lacking


def device_run(cp, folder, name: str, which: str) -> tuple[list[str], list[str]]:
    """Run FOLDER/NAME.WHICH.cubin's kernel k through CuPy (`cp`) on the case's words: (the words unlike the PTX oracle,
    the words unlike the simulator's NAME.sim.npy -- none when there is none).  tests/gpu/test_sim_probes_gpu.py calls
    it on the GPU; test_the_gpu_probe_runs_on_a_simulated_device_s46 with a CuPy whose launches the simulator runs."""
    folder = Path(folder)
    module = cp.RawModule(path=str(folder / f"{name}.{which}.cubin"))
    if name == "s46_uniform":
        rows = []
        for row in PARAM_ROWS:
            out = cp.zeros(PARAM_OUTPUTS, cp.uint32)
            module.get_function("k")((1,), (1,), (out, *(np.uint32(x) for x in row)))
            cp.cuda.Device().synchronize()
            rows.append(cp.asnumpy(out))
        got = np.array(rows)
        a, b, c = (list(x) for x in zip(*PARAM_ROWS))
        want = [param_expected(*row) for row in PARAM_ROWS]
    else:
        if not _SM90:
            _SM90.update(sm90_cases())
        _, (a, b, c), want = _SM90[name]
        n, words = len(a), len(want[0])
        out = cp.zeros(n * words, cp.uint32)
        module.get_function("k")((1,), (n,), (out, *(cp.asarray(np.asarray(x, np.uint32)) for x in (a, b, c))))
        cp.cuda.Device().synchronize()
        got = cp.asnumpy(out).reshape(n, words)
    differ = []
    simulated = folder / f"{name}.sim.npy"
    if simulated.is_file():
        sim = np.load(simulated)
        differ = [f"  a={int(a[i]):#010x} b={int(b[i]):#010x} c={int(c[i]):#010x} word {k}: GPU {int(got[i, k]):#010x} "
                  f"simulator {int(sim[i, k]):#010x}" for i in range(got.shape[0]) for k in range(got.shape[1])
                  if got[i, k] != sim[i, k]]
    return faults(got, want, a, b, c), differ


_SM90: dict = {}


class SimulatedCupy:
    """The few CuPy calls device_run makes, each launch run by the simulator on sm_90 (arrays are NumPy's)."""
    uint32 = np.uint32

    class cuda:  # noqa: N801 (CuPy's spelling)
        class Device:
            def synchronize(self):
                pass

    @staticmethod
    def zeros(n, dtype):
        return np.zeros(n, dtype)

    @staticmethod
    def asarray(x):
        return np.array(x)

    @staticmethod
    def asnumpy(x):
        return np.array(x)

    class RawModule:
        def __init__(self, path: str):
            self.cubin = Path(path).read_bytes()

        def get_function(self, name: str):
            def launch(grid, block, args):
                params, buffers = [], {}
                for k, arg in enumerate(args):
                    if isinstance(arg, np.ndarray) and arg.ndim:
                        params.append(f"p{k}")
                        buffers[f"p{k}"] = arg
                    else:
                        params.append(arg)
                result = run_kernel(self.cubin, "sm_90", grid=grid[0], block=block[0], params=params,
                                    buffers=buffers, kernel_name=name)
                for key, array in buffers.items():
                    array[...] = np.asarray(result[key]).reshape(array.shape)
            return launch


def test_the_gpu_probe_runs_on_a_simulated_device_s46(tmp_path):
    """tests/gpu's half without a GPU: build() (prepare.sh's) of a few cases into a folder, then device_run (the GPU
    test's) with a CuPy whose launches the simulator runs -- so the cubins, the kernel's name and parameters, the output
    shapes and the comparisons are exercised in CI.  Every word meets the PTX oracle and the simulator's .sim.npy; a
    REFUSED case is refused by the simulated device too; bobc's cubin is made for each but BOBC_LACKS's (whose
    assembler refusals are checked, so the list stays true)."""
    names = ["s46_int_to_bf16", "s46_uniform", "s46_bit_counts64", "s46_atomic_add_f64", *sorted(BOBC_LACKS)]
    assert build(tmp_path, names) == sorted(BOBC_LACKS), "BOBC_LACKS is stale: bobc asm now encodes one of them"
    for name in names:
        assert (tmp_path / f"{name}.bobc.cubin").is_file() == (name not in BOBC_LACKS)
        assert (tmp_path / f"{name}.sim.npy").is_file() == (name not in REFUSED)
        for which in ("ptxas", "bobc") if name not in BOBC_LACKS else ("ptxas",):
            if name in REFUSED:
                from bobc.sim.faults import Unmodeled
                with pytest.raises(Unmodeled):
                    device_run(SimulatedCupy, tmp_path, name, which)
                continue
            bad, differ = device_run(SimulatedCupy, tmp_path, name, which)
            assert bad == [] and differ == [], (name, which, bad[:4], differ[:4])
