"""NaN, infinity, -0 and subnormal operands through the instructions session 40's probes
(test_sim_probe_s40_nanbits.py) left out (probe s41 nanprobes2): RED / ATOM .ADD.F32 on global memory,
atom.shared.add.f32 (ptxas's CAS loop), F2F.F64.F16 (cvt.f64.f16), DFMA (fma.rn.f64) and HMMA's F32
accumulators (mma.sync m16n8k16 .f32.f16.f16.f32), on ptxas's SASS in the simulator.

Each kernel's expected words are split in two:

- FIXED -- what the PTX ISA (9.1) states, computed here with exact rationals, never the executor's helpers:
  atom / red .add.f32 (no .noftz) "flushes subnormal inputs and results to sign-preserving zero on global
  memory but supports subnormal inputs and results ... on shared memory" and rounds to nearest even;
  cvt.f64.f16 is exact; fma.rn.f64 is one rounding of a * b + c (IEEE 754: a NaN operand, inf * 0 and
  inf - inf give a NaN); mma's D = A * B + C, here of small integers (exact in any order) besides the
  specials.  A NaN is compared as "some NaN": the PTX ISA fixes no bits for these (single precision:
  "an unspecified NaN"; double: payloads "supported", whose unstated).
- RECORDED -- the bits PTX leaves open (every NaN's, HMMA's -0 and subnormal sums, the F32 atomics'):
  the simulator's choice is pinned here (`SIM_CHOICE`, so a change is seen), and the GPU run
  (tests/gpu/test_sim_probes_gpu.py) asserts only the FIXED part and writes the GPU's words beside the
  simulator's into the log (NAN_BITS_LOG, run.sh's nan_bits.log), for the next session to settle.
  Third-party evidence (a flash-attention test comment, SM100): red.add.f32 "canonicalizes NaN payloads",
  which the simulator does not (it keeps NumPy's bits there, FADD's canonical 0x7fffffff elsewhere).

Not probed: HGMMA (wgmma) accumulators -- its kernel needs shared-memory descriptors and a TMA-less
fill; RED / ATOM .ADD.F16x2 -- tests/sass/test_sim_atomics_f16x2_s41.py runs it in the simulator.
"""
from __future__ import annotations

import math
import struct
import subprocess
from fractions import Fraction

import numpy as np
import pytest

from bobc.nvtools import ptxas

THREADS = 32
NAN = "nan"        # an expected word that must be some NaN (bits not fixed by the PTX ISA)


def _f32(u: int) -> float:
    return struct.unpack("<f", struct.pack("<I", u))[0]


def _f64(u: int) -> float:
    return struct.unpack("<d", struct.pack("<Q", u))[0]


def _f16(u: int) -> float:
    return float(np.array([u], dtype=np.uint16).view(np.float16)[0])


def _bits32(x: float) -> int:
    return struct.unpack("<I", struct.pack("<f", x))[0]


def _bits64(x: float) -> int:
    return struct.unpack("<Q", struct.pack("<d", x))[0]


def _is_nan(u: int, bits: int) -> bool:
    return math.isnan(_f32(u) if bits == 32 else _f64(u))


def _round(x: Fraction, mantissa: int, emin: int, emax: int) -> float:
    """Exact non-zero x rounded to nearest even to a binary format (overflow -> inf), as a Python float."""
    sign, m = (-1 if x < 0 else 1), abs(x)
    e = emin
    while m >= Fraction(2) ** (e + 1):
        e += 1
    quantum = Fraction(2) ** (e - mantissa)
    q, rest = divmod(m, quantum)
    if rest > quantum / 2 or (rest == quantum / 2 and q % 2 == 1):
        q += 1
    value = q * quantum
    return sign * (math.inf if value >= Fraction(2) ** (emax + 1) else float(value))


def _kernel(name: str, target: str, words_in: int, words_out: int, body: str, extra: str = "") -> str:
    """Thread i reads %w0 .. %w{words_in-1} = in[i + k * n] (%a = in + 4 i, its first word's address)
    and stores %o0 .. %o{words_out-1} at out[words_out * i + k]."""
    loads = "\n".join(f" ld.global.u32 %w{k}, [%rd{10 + k}];" if k == 0 else
                      f" add.s64 %rd{10 + k}, %rd{9 + k}, %rd9; ld.global.u32 %w{k}, [%rd{10 + k}];"
                      for k in range(words_in))
    stores = "\n".join(f" st.global.u32 [%rd7+{4 * k}], %o{k};" for k in range(words_out))
    return f""".version 8.8
.target {target}
.address_size 64
.visible .entry {name}(.param .u64 out, .param .u64 in, .param .u32 n)
{{
 .reg .b32 %w<12>; .reg .b32 %o<8>; .reg .b32 %r<16>; .reg .b64 %rd<40>; .reg .pred %p<4>; .reg .b16 %h<8>;
 .reg .b64 %a;
 {extra}
 ld.param.u64 %rd1, [out]; cvta.to.global.u64 %rd2, %rd1;
 ld.param.u64 %rd3, [in]; cvta.to.global.u64 %rd4, %rd3;
 ld.param.u32 %r1, [n]; mov.u32 %r0, %tid.x;
 mul.wide.u32 %rd5, %r0, 4; add.s64 %rd10, %rd4, %rd5; mov.b64 %a, %rd10; mul.wide.u32 %rd9, %r1, 4;
 mul.wide.u32 %rd6, %r0, {4 * words_out}; add.s64 %rd7, %rd2, %rd6;
{loads}
 {body}
{stores}
 ret;
}}
"""


# ---------------------------------------------------------------- the F32 atomics
# (old, addend) pairs: specials of every kind, and subnormal inputs / results whose flushing shows
PAIRS = [(0x00000001, 0x00000000), (0x80000001, 0x80000000), (0x00800000, 0x80800001), (0x007FFFFF, 0x00000001),
         (0x00400000, 0x00400000), (0x3F800000, 0x00000001), (0x80000000, 0x80000000), (0x80000000, 0x00000000),
         (0x7F800000, 0xFF800000), (0x7FC00000, 0x3F800000), (0xFFC00000, 0x3F800000), (0x7F800001, 0xBF800000),
         (0x3F800000, 0xFFA12345), (0x7FFFFFFF, 0x80000000), (0x00000001, 0xFFC00000), (0x7F7FFFFF, 0x7F7FFFFF),
         (0xFF7FFFFF, 0xFF7FFFFF), (0x7F800000, 0x3F800000), (0xFF800000, 0x7FC00001), (0x3F800000, 0xBF800000),
         (0xBF800000, 0x3F800000), (0x00000000, 0x80000000), (0x3F800000, 0x33800000), (0x3F800000, 0x33800001),
         (0x807FFFFF, 0x007FFFFE), (0x00000003, 0x80000001), (0x4B800000, 0x3F800000), (0x40490FDB, 0xC0490FDB),
         (0x7FC00000, 0x7FC00000), (0xFFFFFFFF, 0x7F800001), (0x00000002, 0x80000003), (0x34000000, 0x00000001)]


def _atomic_sum(old: int, addend: int, flush: bool):
    """PTX atom / red .add.f32: RN; with `flush` (global memory, no .noftz) subnormal inputs and results
    become sign-preserving zeros.  An int word, or NAN."""
    x, y = _f32(old), _f32(addend)
    if flush:
        x, y = (math.copysign(0.0, v) if v != 0 and abs(v) < 2.0 ** -126 else v for v in (x, y))
    if math.isnan(x) or math.isnan(y) or (math.isinf(x) and math.isinf(y) and x != y):
        return NAN
    if math.isinf(x) or math.isinf(y):
        return _bits32(x if math.isinf(x) else y)
    exact = Fraction(x) + Fraction(y)
    if exact == 0:      # IEEE 754 RN: -0 only for -0 + -0
        return _bits32(-0.0 if math.copysign(1, x) < 0 and math.copysign(1, y) < 0 else 0.0)
    value = _round(exact, 23, -126, 127)
    if flush and value != 0 and abs(value) < 2.0 ** -126:
        value = math.copysign(0.0, value)
    return _bits32(value)


def _atomic_inputs() -> np.ndarray:
    return np.array([p[0] for p in PAIRS] + [p[1] for p in PAIRS], dtype=np.uint32)


def _atomic_expect(flush: bool, returns_old: bool):
    def expect(inputs: np.ndarray) -> list:
        want = []
        for k in range(THREADS):
            old, addend = int(inputs[k]), int(inputs[THREADS + k])
            want += [_atomic_sum(old, addend, flush), old if returns_old else None]
        return want
    return expect


def _nan_of_sum(old: int, addend: int) -> int:
    """SIM_CHOICE for a NaN atomic sum on global memory: NumPy's (x86) bits -- the first NaN operand
    quieted (sign and payload kept), 0xffc00000 for inf - inf."""
    for u in (old, addend):
        if _is_nan(u, 32):
            return u | 0x00400000
    return 0xFFC00000


def _atomic_choice(flush: bool):
    def choice(inputs: np.ndarray) -> list:
        out = []
        for k in range(THREADS):
            old, addend = int(inputs[k]), int(inputs[THREADS + k])
            out += [(_nan_of_sum(old, addend) if flush else 0x7FFFFFFF)
                    if _atomic_sum(old, addend, flush) == NAN else None, None]
        return out
    return choice


# ---------------------------------------------------------------- cvt.f64.f16 and fma.rn.f64
HALVES = [0x0000, 0x8000, 0x0001, 0x8001, 0x03FF, 0x83FF, 0x0400, 0x3C00, 0xBC00, 0x7BFF, 0xFBFF, 0x7C00,
          0xFC00, 0x7C01, 0xFC01, 0x7DFF, 0x7E00, 0xFE00, 0x7E01, 0x7FFF, 0xFFFF, 0x3555, 0x0200, 0x8200,
          0x7D00, 0xFD00, 0x4248, 0x1400, 0x0003, 0x7F00, 0xFF80, 0x5BFF]


def _widened(h: int):
    x = _f16(h)
    return NAN if math.isnan(x) else _bits64(x)


def _halves_inputs() -> np.ndarray:
    # the probed half in the low 16 bits of word 0; the high half holds another, which must not matter
    return np.array([h | HALVES[(k + 7) % THREADS] << 16 for k, h in enumerate(HALVES)], dtype=np.uint32)


def _split(want64: list) -> list:
    return [w for u in want64 for w in ((NAN, NAN) if u == NAN else (None, None) if u is None else
                                        (u & 0xFFFFFFFF, u >> 32))]


def _widen_choice(h: int):
    """SIM_CHOICE: a NaN widened with its sign and payload (shifted up 42 bits), quieted."""
    if not math.isnan(_f16(h)):
        return None
    return (h >> 15) << 63 | 0x7FF << 52 | 1 << 51 | (h & 0x3FF) << 42


F64 = [0x0000000000000000, 0x8000000000000000, 0x3FF0000000000000, 0xBFF0000000000000, 0x7FF0000000000000,
       0xFFF0000000000000, 0x7FF8000000000000, 0xFFF8000000000000, 0x7FF0000000000001, 0xFFF4000000012345,
       0x7FFFFFFFFFFFFFFF, 0x0000000000000001, 0x800FFFFFFFFFFFFF, 0x0010000000000000, 0x7FEFFFFFFFFFFFFF,
       0x400921FB54442D18, 0x3CA0000000000000, 0x3FF0000000000001, 0xC000000000000000, 0x7FF8000000ABCDEF]
# (a, b, c) index triples into F64: NaN operands in each place, inf * 0, inf - inf, -0 sums, subnormal
# products, an exact tie, overflow
TRIPLES = [(6, 2, 0), (2, 6, 0), (2, 2, 6), (9, 2, 19), (4, 0, 2), (0, 5, 6), (4, 2, 5), (4, 2, 4),
           (1, 2, 0), (1, 2, 1), (0, 3, 0), (11, 16, 0), (11, 16, 1), (16, 16, 2), (17, 17, 3), (14, 18, 0),
           (14, 2, 14), (12, 2, 13), (12, 3, 11), (15, 15, 1), (10, 8, 2), (19, 9, 7), (7, 2, 19), (13, 16, 1),
           (3, 0, 0), (4, 18, 4), (5, 3, 4), (2, 17, 16), (15, 3, 15), (8, 0, 2), (18, 18, 16), (0, 0, 1)]


def _fma64(a: int, b: int, c: int):
    x, y, z = _f64(a), _f64(b), _f64(c)
    if any(math.isnan(v) for v in (x, y, z)) or ((math.isinf(x) and y == 0) or (math.isinf(y) and x == 0)):
        return NAN
    if math.isinf(x) or math.isinf(y):
        product = math.copysign(math.inf, x * y if x * y != 0 else math.copysign(1, x) * math.copysign(1, y))
        if math.isinf(z) and z != product:
            return NAN
        return _bits64(product)
    if math.isinf(z):
        return _bits64(z)
    exact = Fraction(x) * Fraction(y) + Fraction(z)
    if exact == 0:
        negative_product = (math.copysign(1, x) * math.copysign(1, y)) < 0
        both_negative = negative_product and math.copysign(1, z) < 0
        if Fraction(x) * Fraction(y) == 0 and z == 0:
            return _bits64(-0.0 if both_negative else 0.0)
        return _bits64(0.0)
    return _bits64(_round(exact, 52, -1022, 1023))


def _fma_inputs() -> np.ndarray:
    words = [[F64[t[j]] >> s & 0xFFFFFFFF for t in TRIPLES] for j in range(3) for s in (0, 32)]
    return np.array(sum(words, []), dtype=np.uint32)


def _fma_choice(a: int, b: int, c: int):
    """Not pinned: executor._exact_op64 takes Python's a * b + c for non-finite operands, so which NaN operand
    wins follows x86's SSE rules as CPython's compiled code orders them (seen: a NaN c over a quieted
    signalling a, a NaN a over a NaN c) -- recorded beside the GPU's words only through the CPU run."""
    return None


# ---------------------------------------------------------------- HMMA.16816.F32
def _mma_matrices():
    """A (16 x 16 binary16 bits), B (16 x 8), C (16 x 8 binary32 bits): small integers, and specials placed
    so each output row / column meets few of them (row r of D = A[r] . B + C[r])."""
    h = lambda v: int(np.array([v], dtype=np.float16).view(np.uint16)[0])   # noqa: E731
    A = [[h(float((3 * r + k) % 4)) for k in range(16)] for r in range(16)]
    B = [[h(float((k + 2 * n) % 3)) for n in range(8)] for k in range(16)]
    C = [[_bits32(float((r + n) % 5)) for n in range(8)] for r in range(16)]
    A[0][0] = 0x7E01                    # a quiet NaN with a payload: row 0 NaN
    A[1][2] = 0xFC01                    # a negative signalling NaN: row 1 NaN
    A[2][5] = 0x7C00                    # +inf: row 2 +inf, but NaN where B[5][n] == 0 (inf * 0)
    A[3][7], A[3][8] = 0x7C00, 0xFC00   # inf - inf: row 3 NaN
    for k in range(16):
        A[3][k] = A[3][k] if k in (7, 8) else h(1.0)
        A[4][k] = h(0.0)                # row 4: C alone (+ zero products)
        A[5][k] = 0x8000                # row 5: -0 products
        A[6][k] = h(0.0)
        A[8][k] = h(0.0)
    for n in range(8):
        B[7][n] = B[8][n] = h(1.0)
        B[5][n] = h(1.0)
    B[5][3] = h(0.0)
    C[4][:6] = [0x7FC00123, 0x7F800000, 0xFF800000, 0x80000000, 0xFFFFFFFF, 0x00000000]
    C[5][:3] = [0x80000000, 0x00000000, 0x3F800000]
    A[6][0] = 0x0001                    # a binary16 subnormal product: 2^-24 * B[0][n]
    C[8][:4] = [0x00000001, 0x80000001, 0x00400000, 0x807FFFFF]   # binary32 subnormal C plus zero products
    A[9][1] = 0xFC00                    # -inf: row 9 -inf where B[1][n] != 0 ...
    C[9][0] = 0x7F800000                # ... NaN where C is +inf
    A[10][3] = 0x7BFF                   # 65504 * B: large products, exact in binary32
    B[10][7] = 0x7E00                   # column 7 NaN in every row
    return A, B, C


def _mma_fragments():
    """The m16n8k16 .row.col fragments of every lane (PTX ISA, mma.m16n8k16 with .f16): 10 words a lane --
    A's four registers, B's two, C's four."""
    A, B, C = _mma_matrices()
    lanes = []
    for lane in range(THREADS):
        g, t = lane // 4, lane % 4
        a = [A[g + 8 * ((i >> 1) & 1)][2 * t + (i & 1) + 8 * (i >> 2)] for i in range(8)]
        b = [B[2 * t + (i & 1) + 8 * (i >> 1)][g] for i in range(4)]
        c = [C[g + 8 * (i >> 1)][2 * t + (i & 1)] for i in range(4)]
        lanes.append([a[0] | a[1] << 16, a[2] | a[3] << 16, a[4] | a[5] << 16, a[6] | a[7] << 16,
                      b[0] | b[1] << 16, b[2] | b[3] << 16] + c)
    return lanes


def _mma_inputs() -> np.ndarray:
    lanes = _mma_fragments()
    return np.array([lanes[lane][k] for k in range(10) for lane in range(THREADS)], dtype=np.uint32)


def _dot(r: int, n: int, A, B, C):
    """D[r][n] per IEEE 754 arithmetic: NaN for a NaN operand, inf * 0 or inf - inf, an inf for infinities
    of one sign, else the exact sum (None where the bits of a zero or subnormal sum are not fixed)."""
    terms, specials = [], []
    for k in range(16):
        x, y = _f16(A[r][k]), _f16(B[k][n])
        if math.isnan(x) or math.isnan(y) or (math.isinf(x) and y == 0) or (math.isinf(y) and x == 0):
            return NAN
        if math.isinf(x) or math.isinf(y):
            specials.append(math.copysign(math.inf, x) * math.copysign(1, y) if math.isinf(x)
                            else math.copysign(math.inf, y) * math.copysign(1, x))
        else:
            terms.append(Fraction(x) * Fraction(y))
    c = _f32(C[r][n])
    if math.isnan(c):
        return NAN
    if math.isinf(c):
        specials.append(c)
    if specials:
        return NAN if len(set(specials)) > 1 else _bits32(specials[0])
    total = sum(terms, Fraction(0)) + Fraction(c)
    if total == 0 or abs(total) < Fraction(2) ** -126:
        return None             # a zero's sign, a subnormal sum: not fixed (recorded)
    return _bits32(_round(total, 23, -126, 127))


def _mma_expect(inputs: np.ndarray) -> list:
    A, B, C = _mma_matrices()
    want = []
    for lane in range(THREADS):
        g, t = lane // 4, lane % 4
        want += [_dot(g + 8 * (i >> 1), 2 * t + (i & 1), A, B, C) for i in range(4)]
    return want


def _mma_choice(inputs: np.ndarray) -> list:
    """SIM_CHOICE: a NaN is 0x7fffffff (docs/simulator.md: HMMA's F32 accumulators); a zero sum is +0
    even of -0 products and a -0 C (IEEE 754 would give -0), a subnormal C plus zero products kept."""
    A, B, C = _mma_matrices()
    out = []
    for lane in range(THREADS):
        g, t = lane // 4, lane % 4
        for i in range(4):
            r, n = g + 8 * (i >> 1), 2 * t + (i & 1)
            want = _dot(r, n, A, B, C)
            if want == NAN:
                out.append(0x7FFFFFFF)
            elif want is None:
                c = _f32(C[r][n])
                out.append(_bits32(c) if c != 0 else 0)
            else:
                out.append(None)
    return out


# name -> (PTX body, words in, words out, inputs, expect(inputs) -> FIXED words (int, NAN or None),
#          SIM_CHOICE(inputs) -> the simulator's words where not fixed (int or None), bobc asm has the form,
#          extra declarations, archs)
SHARED = ".shared .align 4 .b32 sh[32];"
CASES = {
    # ptxas: REDG.E.ADD.F32.FTZ.RN.STRONG.GPU; the word is read back after the reduction
    "red_add_f32_global": ("red.global.add.f32 [%a], %w1; ld.global.u32 %o0, [%a]; mov.u32 %o1, 0;",
                           2, 2, _atomic_inputs, _atomic_expect(True, False), _atomic_choice(True), True, "",
                           ("sm_86", "sm_90")),
    # ptxas: ATOMG.E.ADD.F32.FTZ.RN.STRONG.GPU (learned from tools/ptx_corpus/conv_atomic_forms.ptx)
    "atom_add_f32_global": ("atom.global.add.f32 %o1, [%a], %w1; ld.global.u32 %o0, [%a];",
                            2, 2, _atomic_inputs, _atomic_expect(True, True), _atomic_choice(True), True, "",
                            ("sm_86", "sm_90")),
    # ptxas: a loop of FADD and ATOMS.CAST.SPIN (no flushing: PTX keeps subnormals on shared memory); the
    # simulator runs ATOMS.CAST.SPIN since probe s41 asmconv (a compare-and-store returning success)
    "atom_add_f32_shared": ("mov.u32 %r2, sh; shl.b32 %r3, %r0, 2; add.u32 %r4, %r2, %r3; "
                            "st.shared.u32 [%r4], %w0; atom.shared.add.f32 %o1, [%r4], %w1; "
                            "ld.shared.u32 %o0, [%r4];",
                            2, 2, _atomic_inputs, _atomic_expect(False, True), lambda i: [None] * (2 * THREADS), True, SHARED,
                            ("sm_86", "sm_90")),
    # ptxas: F2F.F64.F16 (learned from tools/ptx_corpus/conv_atomic_forms.ptx)
    "cvt_f64_f16": ("mov.b32 {%h1, %h2}, %w0; cvt.f64.f16 %rd20, %h1; mov.b64 {%o0, %o1}, %rd20;",
                    1, 2, _halves_inputs, lambda i: _split([_widened(int(w) & 0xFFFF) for w in i]),
                    lambda i: _split([_widen_choice(int(w) & 0xFFFF) for w in i]), True, "", ("sm_86", "sm_90")),
    "fma_f64": ("mov.b64 %rd20, {%w0, %w1}; mov.b64 %rd21, {%w2, %w3}; mov.b64 %rd22, {%w4, %w5}; "
                "fma.rn.f64 %rd23, %rd20, %rd21, %rd22; mov.b64 {%o0, %o1}, %rd23;",
                6, 2, _fma_inputs, lambda i: _split([_fma64(F64[a], F64[b], F64[c]) for a, b, c in TRIPLES]),
                lambda i: _split([_fma_choice(F64[a], F64[b], F64[c]) for a, b, c in TRIPLES]), True, "",
                ("sm_86", "sm_90")),
    "mma_f32_f16": ("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%o0, %o1, %o2, %o3}, "
                    "{%w0, %w1, %w2, %w3}, {%w4, %w5}, {%w6, %w7, %w8, %w9};",
                    10, 4, _mma_inputs, _mma_expect, _mma_choice, True, "", ("sm_86", "sm_90")),
}


def ptx(name: str, arch: str) -> str:
    body, words_in, words_out, _, _, _, _, extra, _ = CASES[name]
    return _kernel(name, arch, words_in, words_out, body, extra)


def inputs(name: str) -> np.ndarray:
    return CASES[name][3]()


def words_out(name: str) -> int:
    return CASES[name][2]


WIDE = ("cvt_f64_f16", "fma_f64")     # binary64 results: words 2k, 2k + 1 are one value (low, high)


def check(name: str, out: np.ndarray) -> list[str]:
    """The FIXED words `out` (what a kernel stored) breaks, one line each."""
    want, got = CASES[name][4](inputs(name)), out.tolist()
    bad = []
    for k, w in enumerate(want):
        if w is None or (w == NAN and name in WIDE and k % 2 == 0):
            continue
        if w == NAN:
            nan = _is_nan(got[k - 1] | got[k] << 32, 64) if name in WIDE else _is_nan(got[k], 32)
            if not nan:
                bad.append(f"  word {k}: {got[k]:08x}, PTX: a NaN")
        elif got[k] != w:
            bad.append(f"  word {k}: {got[k]:08x}, PTX: {w:08x}")
    return bad


def open_words(name: str, out: np.ndarray) -> list[str]:
    """The words whose bits the PTX ISA leaves open (a NaN's, an unfixed zero or subnormal), as `out` holds
    them, beside the simulator's choice where it runs the kernel: the record of a GPU run."""
    want, choice = CASES[name][4](inputs(name)), CASES[name][5](inputs(name))
    return [f"  word {k}: {g:08x}" + (f" (simulator {c:08x})" if c is not None else "")
            for k, (w, c, g) in enumerate(zip(want, choice, out.tolist())) if w == NAN or c is not None]


def sim_choice_breaks(name: str, out: np.ndarray) -> list[str]:
    choice = CASES[name][5](inputs(name))
    return [f"  word {k}: {g:08x}, pinned choice {c:08x}" for k, (c, g) in enumerate(zip(choice, out.tolist()))
            if c is not None and c != g]


def _run(name: str, arch: str, tmp_path) -> np.ndarray:
    from bobc.sim.kernel import run_kernel
    source, cubin = tmp_path / f"{name}.ptx", tmp_path / f"{name}.cubin"
    source.write_text(ptx(name, arch))
    subprocess.run([ptxas(), f"-arch={arch}", "-O3", "-o", str(cubin), str(source)], check=True,
                   capture_output=True)
    with np.errstate(all="ignore"):
        return run_kernel(cubin.read_bytes(), arch, grid=1, block=THREADS, params=["out", "in", np.uint32(THREADS)],
                          buffers={"out": np.zeros(words_out(name) * THREADS, np.uint32), "in": inputs(name)},
                          kernel_name=name)["out"]


RUNS = [(name, arch) for name in sorted(CASES) for arch in CASES[name][8]]


@pytest.mark.parametrize(("name", "arch"), RUNS)
def test_specials_give_what_ptx_fixes_and_the_pinned_choice(name, arch, tmp_path, needs_ptxas):
    out = _run(name, arch, tmp_path)
    bad = check(name, out)
    assert not bad, f"{arch} {name}: simulator != PTX ISA\n" + "\n".join(bad)
    moved = sim_choice_breaks(name, out)
    assert not moved, f"{arch} {name}: the simulator's choice for bits PTX leaves open changed\n" + "\n".join(moved)


def test_the_probes_hold_the_specials_they_name():
    """Every atomic pair kind (NaN, inf - inf, subnormal in and out), every binary16 kind widened, NaNs in
    each fma operand place, and each mma special give an expected NaN / inf / pinned word somewhere."""
    atomic = _atomic_expect(True, False)(_atomic_inputs())[0::2]
    assert NAN in atomic and _bits32(0.0) in atomic and _bits32(-0.0) in atomic
    # a subnormal result flushed on global memory, kept on shared memory
    shared = _atomic_expect(False, False)(_atomic_inputs())[0::2]
    assert any(g != s and s not in (NAN,) and 0 < (s & 0x7FFFFFFF) < 0x00800000 for g, s in zip(atomic, shared))
    kinds = {("nan" if math.isnan(_f16(h)) else "inf" if math.isinf(_f16(h)) else
              "zero" if _f16(h) == 0 else "sub" if abs(_f16(h)) < 2.0 ** -14 else "normal", h >> 15) for h in HALVES}
    assert {(k, s) for k in ("nan", "inf", "zero", "sub", "normal") for s in (0, 1)} <= kinds
    assert {0x7C01, 0xFC01} <= set(HALVES)           # signalling NaNs
    assert [_fma64(F64[a], F64[b], F64[c]) for a, b, c in TRIPLES[:3]] == [NAN] * 3
    mma = _mma_expect(None)
    assert mma.count(NAN) >= 16 and _bits32(math.inf) in mma and _bits32(-math.inf) in mma and None in mma


def sm90_cases() -> dict:
    """Every kernel of this file for sm_90, for the GPU (tests/gpu/test_sim_probes_gpu.py; cubins made by
    tests/gpu/prepare.sh): name -> (PTX, inputs, words out a thread, bobc asm has its SASS forms)."""
    return {name: (ptx(name, "sm_90"), inputs(name), words_out(name), CASES[name][6]) for name in sorted(CASES)}
