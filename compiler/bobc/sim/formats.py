"""The narrow floating-point formats the simulator converts to and from -- binary16, bfloat16 and the two 8-bit
formats of sm_89 / sm_90's cvt ... .e4m3x2 / .e5m2x2 -- and one rounding of exact values into any of them.

Each format is data, declared once with its source:
- binary16: IEEE 754-2008 3.6 (5 exponent bits, bias 15, 10 fraction bits, infinities and NaNs at exponent 31);
- bfloat16: the high 16 bits of a binary32 (8 exponent bits, bias 127, 7 fraction bits; PTX ISA "Alternate
  floating-point data formats");
- E4M3 and E5M2: the OCP 8-bit floating point specification (OFP8, rev. 1.0), which the PTX ISA's .e4m3 / .e5m2
  name: E4M3 has bias 7, no infinities, and its only NaNs are S.1111.111 (0x7f / 0xff), so its exponent 15 holds
  normal numbers up to 448; E5M2 is IEEE-like, bias 15, infinities and NaNs at exponent 31, largest 57344.

`round_bits` rounds exact values (binary64 arrays holding a binary32 or binary64 operand, which are exact) in one
of IEEE 754's four modes, with PTX cvt's .relu (a negative result +0) and .satfinite (past the largest finite value,
infinities included, the largest finite value of the sign; a NaN stays a NaN).  A NaN result is the format's
canonical NaN: 0x7fff for the 16-bit formats (docs/simulator.md, "NaN, infinity, -0 and subnormal results"), 0x7f
for the 8-bit ones (the OFP8 NaN of E4M3 with a clear sign; for E5M2 the simulator's choice, which
tests/gpu/test_sim_probes_gpu.py records beside the GPU's)."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class Format:
    bits: int
    exponent_bits: int
    fraction_bits: int
    bias: int
    infinities: bool          # an all-ones exponent holds infinities and NaNs (IEEE-like); E4M3's holds numbers
    nan: int                  # the canonical NaN the simulator writes

    @property
    def largest_exponent(self) -> int:
        return (1 << self.exponent_bits) - (2 if self.infinities else 1) - self.bias

    @property
    def largest(self) -> float:
        """The largest finite value: E4M3's top exponent's fraction 111 is the NaN, so its largest is 1.110b."""
        top = (1 << self.fraction_bits) - (1 if self.infinities else 2)
        return float(((1 << self.fraction_bits) + top) * 2.0 ** (self.largest_exponent - self.fraction_bits))

    @property
    def sign(self) -> int:
        return 1 << (self.bits - 1)

    @property
    def infinity(self) -> int:
        return ((1 << self.exponent_bits) - 1) << self.fraction_bits


FORMATS = {
    "F16": Format(16, 5, 10, 15, True, 0x7FFF),
    "BF16": Format(16, 8, 7, 127, True, 0x7FFF),
    "E4M3": Format(8, 4, 3, 7, False, 0x7F),
    "E5M2": Format(8, 5, 2, 15, True, 0x7F),
}
MODES = ("RN", "RZ", "RM", "RP")


def round_bits(x, name: str, mode: str = "RN", satfinite: bool = False, relu: bool = False) -> np.ndarray:
    """The bits (uint32, in the low `bits` bits) of binary64 values `x` rounded once to format `name` by `mode` (RN to
    nearest, ties to even; RZ toward zero; RM toward -inf; RP toward +inf: IEEE 754 4.3), subnormals kept.  A value
    past the largest finite one is, by IEEE 754 7.4, an infinity rounding to nearest or away from zero and the largest
    finite value toward zero; with `satfinite`, or in a format without infinities, the largest finite value of its sign
    (an infinite input too).  `relu`: a negative result, -0 included, is +0 (PTX cvt .relu; the H100 writes +0 for
    fma.rn.relu's -0, session 43)."""
    if mode not in MODES:
        raise ValueError(mode)
    f = FORMATS[name]
    x = np.asarray(x, dtype=np.float64)
    negative = np.signbit(x)
    a = np.abs(x)
    finite = np.isfinite(a) & (a != 0)
    safe = np.where(finite, a, 1.0)
    exponent = np.frexp(safe)[1].astype(np.int64) - 1                  # a = 1.m * 2^exponent
    exponent = np.maximum(exponent, 1 - f.bias)                          # below the normal range: subnormal steps
    quantum = exponent - f.fraction_bits
    scaled = np.ldexp(safe, -quantum)                                    # exact: a power-of-two scaling
    n = np.floor(scaled)
    rest = scaled - n
    odd = np.fmod(n, 2) == 1
    if mode == "RN":
        up = (rest > 0.5) | ((rest == 0.5) & odd)
    elif mode == "RZ":
        up = np.zeros_like(rest, dtype=bool)
    else:
        away = negative if mode == "RM" else ~negative
        up = away & (rest > 0)
    n = (n + up).astype(np.int64)
    bits = ((exponent + f.bias) << f.fraction_bits) + n - (1 << f.fraction_bits)
    magnitude = np.ldexp(n.astype(np.float64), quantum)
    largest = ((1 << f.exponent_bits) - 1) << f.fraction_bits if f.infinities else f.nan
    largest -= 1                                                          # the largest finite value's bits
    to_largest = {"RN": np.zeros_like(negative), "RZ": np.ones_like(negative), "RM": ~negative,
                  "RP": negative}[mode] | satfinite | (not f.infinities)
    over = finite & (magnitude > f.largest)
    bits = np.where(over, np.where(to_largest, largest, f.infinity), bits)
    infinite = np.isinf(a)
    bits = np.where(infinite, f.infinity if f.infinities and not satfinite else largest, bits)
    bits = np.where(a == 0, 0, bits)
    bits = np.where(negative, bits | f.sign, bits).astype(np.int64)
    if relu:
        bits = np.where(negative, 0, bits)
    bits = np.where(np.isnan(x), f.nan, bits)
    return bits.astype(np.uint32)


def widen(bits, name: str) -> np.ndarray:
    """The binary64 values of format `name`'s `bits` (exact); a NaN is NumPy's NaN."""
    f = FORMATS[name]
    bits = np.asarray(bits, dtype=np.int64) & ((1 << f.bits) - 1)
    exponent = (bits >> f.fraction_bits) & ((1 << f.exponent_bits) - 1)
    fraction = bits & ((1 << f.fraction_bits) - 1)
    normal = exponent != 0
    significand = np.where(normal, fraction + (1 << f.fraction_bits), fraction).astype(np.float64)
    value = np.ldexp(significand, np.where(normal, exponent, 1) - f.bias - f.fraction_bits)
    top = exponent == (1 << f.exponent_bits) - 1
    if f.infinities:
        value = np.where(top, np.where(fraction == 0, np.inf, np.nan), value)
    else:
        value = np.where(top & (fraction == (1 << f.fraction_bits) - 1), np.nan, value)
    return np.where((bits & f.sign) != 0, -value, value)
