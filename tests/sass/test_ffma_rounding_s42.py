"""FFMA rounds a * b + c once, as PTX fma does (probe s42 ptxcover): the simulator computed a * b + c in binary64
and rounded that to binary32 -- two roundings -- so fma.rn.f32(1 + 2^-12, 1 + 2^-12, 2^-70) gave 0x3f801000 where
the one rounding of the exact value gives 0x3f801001, silently (29 of 32 such threads wrong); FFMA.RZ / .RM / .RP
(ptxas's division slow paths) were refused.

Each kernel is ptxas's -O3 cubin of fma.<mode>.f32, run in the simulator with the control-code checker on.  The
expected value is the exact rational a * b + c (fractions.Fraction) rounded to binary32 by the mode's rule
(IEEE 754: to nearest with ties to even, toward zero, -inf, +inf; an exact zero by IEEE 754 6.3's sign rule).
The helpers here serve tests/sass/test_division_paths_s42.py too."""
from __future__ import annotations

import subprocess
from fractions import Fraction

import numpy as np
import pytest

from bobc.nvtools import ptxas

ARCHES = ("sm_86", "sm_90")
BLOCK = 128


def _kernel(name: str, arch: str, body: str) -> str:
    """out[i] (two words) from a = in[i], b = in[i + n], c = in[i + 2n] (words) over the whole grid."""
    return f""".version 8.8
.target {arch}
.address_size 64
.visible .entry {name}(.param .u64 out, .param .u64 in, .param .u32 n)
{{
 .reg .b32 %r<40>; .reg .b64 %rd<40>; .reg .f32 %f<16>; .reg .pred %p<4>;
 ld.param.u64 %rd1, [out]; cvta.to.global.u64 %rd2, %rd1;
 ld.param.u64 %rd3, [in]; cvta.to.global.u64 %rd4, %rd3;
 ld.param.u32 %r30, [n];
 mov.u32 %r20, %tid.x; mov.u32 %r21, %ctaid.x; mov.u32 %r22, %ntid.x; mad.lo.u32 %r1, %r21, %r22, %r20;
 mul.wide.u32 %rd5, %r1, 4; add.s64 %rd6, %rd4, %rd5; mul.wide.u32 %rd9, %r30, 4;
 ld.global.u32 %r2, [%rd6]; add.s64 %rd10, %rd6, %rd9; ld.global.u32 %r3, [%rd10];
 add.s64 %rd11, %rd10, %rd9; ld.global.u32 %r4, [%rd11];
 add.s64 %rd15, %rd11, %rd9; ld.global.u32 %r7, [%rd15];
 mov.b32 %f1, %r2; mov.b32 %f2, %r3; mov.b32 %f4, %r4;
 mov.b64 %rd13, {{%r2, %r3}}; mov.b64 %rd14, {{%r4, %r7}};
 mov.u32 %r10, 0; mov.u32 %r11, 0;
 {body}
 mul.wide.u32 %rd16, %r1, 8; add.s64 %rd12, %rd2, %rd16; st.global.v2.u32 [%rd12], {{%r10, %r11}};
 ret;
}}
"""


def run(name: str, arch: str, body: str, words: np.ndarray, tmp_path) -> np.ndarray:
    """ptxas's cubin of the kernel run in the simulator over `words` ([4, n] uint32): the [n, 2] words stored."""
    from bobc.sim.kernel import run_kernel
    ptx, cubin = tmp_path / f"{name}.ptx", tmp_path / f"{name}.cubin"
    ptx.write_text(_kernel(name, arch, body))
    subprocess.run([ptxas(), f"-arch={arch}", "-O3", "-o", str(cubin), str(ptx)], check=True, capture_output=True)
    n = words.shape[1]
    assert n % BLOCK == 0
    out = run_kernel(cubin.read_bytes(), arch, grid=n // BLOCK, block=BLOCK, params=["out", "in", np.uint32(n)],
                     buffers={"out": np.zeros(2 * n, np.uint32), "in": words.astype(np.uint32).reshape(-1)},
                     kernel_name=name)["out"]
    return out.reshape(n, 2)


# ----------------------------------------------------------------- operands
SPECIAL = np.array([0.0, -0.0, 1.0, -1.0, 3.0, 7.0, 0.1, 1e-38, 1e38, 3.4e38, np.inf, -np.inf, np.nan, 1.4e-45,
                    1.1754944e-38, 1.1754942e-38, 2.0 ** 126, 2.0 ** -126, 2.0 ** 127, 2.0 ** -127, 1e-40, 5e-39,
                    1 / 3, 65504.0, -2.5, 1e30, 1e-30, 6.0, 2.0 ** -100, 2.0 ** -103, 2.0 ** 100, 1.5], np.float32)


def operands(count: int, seed: int) -> np.ndarray:
    """[4, count] words: binary32 values of every exponent (random signs and mantissas, the biased exponent
    uniform over 0..255, so zeros, subnormals, infinities and NaNs too) after every pair of SPECIAL."""
    rng = np.random.default_rng(seed)
    pairs = np.array([(a, b) for a in SPECIAL for b in SPECIAL], np.float32).view(np.uint32)
    rest = count - len(pairs)
    sign = rng.integers(0, 2, (3, rest), dtype=np.uint32) << np.uint32(31)
    exponent = rng.integers(0, 256, (3, rest), dtype=np.uint32) << np.uint32(23)
    mantissa = rng.integers(0, 1 << 23, (3, rest), dtype=np.uint32)
    words = np.zeros((4, count), np.uint32)
    words[:2, :len(pairs)] = pairs.T
    words[:3, len(pairs):] = sign | exponent | mantissa
    words[2, :len(pairs)] = np.roll(pairs[:, 0], 7)
    return words


def f32(words) -> np.ndarray:
    return np.asarray(words, np.uint32).view(np.float32)


def same_floats(got_words, want: np.ndarray, what: str, inputs) -> None:
    """Bit for bit, but any NaN for a NaN (the PTX ISA fixes no NaN's bits for these operations)."""
    got = f32(got_words)
    bad = ~((got.view(np.uint32) == want.view(np.uint32)) | (np.isnan(got) & np.isnan(want)))
    lines = [f"  {' '.join(f'{int(w):08x}' for w in inputs[:, i])}: got {int(got.view(np.uint32)[i]):08x}, "
             f"want {int(want.view(np.uint32)[i]):08x}" for i in np.flatnonzero(bad)[:8]]
    assert not bad.any(), f"{what}: {int(bad.sum())} of {len(got)} wrong\n" + "\n".join(lines)


# ----------------------------------------------------------------- exact rounding (the oracle)
def round_f32(x: Fraction, mode: str) -> np.float32:
    """The binary32 value of the exact rational x rounded by `mode` (rn: to nearest, ties to even; rz, rm, rp)."""
    with np.errstate(over="ignore"):
        guess = np.float32(float(x))        # float(Fraction) is correctly rounded to binary64
    if np.isinf(guess):
        guess = np.copysign(np.finfo(np.float32).max, np.float32(float(x) > 0) - np.float32(0.5))
    with np.errstate(over="ignore"):
        near = {guess, np.nextafter(guess, np.float32(-np.inf)), np.nextafter(guess, np.float32(np.inf))}
    candidates = sorted((c for c in near if np.isfinite(c)), key=float)
    big = Fraction(2) ** 128 - Fraction(2) ** 103          # binary32's overflow threshold for rounding to nearest
    if mode == "rn":
        if abs(x) >= big:
            return np.float32(np.copysign(np.inf, float(x)))
        best = min(candidates, key=lambda c: (abs(Fraction(float(c)) - x), int(c.view(np.uint32)) & 1))
    elif mode == "rz":
        best = max((c for c in candidates if abs(Fraction(float(c))) <= abs(x)
                    and (c == 0 or np.sign(c) == np.sign(float(x)))), key=lambda c: abs(float(c)))
    elif mode == "rm":
        best = max((c for c in candidates if Fraction(float(c)) <= x), key=float, default=None)
        if best is None:
            return np.float32(-np.inf)
    else:
        best = min((c for c in candidates if Fraction(float(c)) >= x), key=float, default=None)
        if best is None:
            return np.float32(np.inf)
    if best == 0 and x != 0:
        best = np.float32(np.copysign(0.0, float(x)))
    return best


def fma_exact(a: np.float32, b: np.float32, c: np.float32, mode: str) -> np.float32:
    """IEEE 754 fusedMultiplyAdd of binary32 values, from the exact value (specials by IEEE 754's rules, NumPy's
    binary64 arithmetic agreeing there)."""
    if not (np.isfinite(a) and np.isfinite(b) and np.isfinite(c)):
        with np.errstate(all="ignore"):
            return np.float32(np.float64(a) * np.float64(b) + np.float64(c))
    x = Fraction(float(a)) * Fraction(float(b)) + Fraction(float(c))
    if x == 0:
        # IEEE 754 6.3: an exact zero sum of addends of opposite signs is +0, or -0 rounding toward -inf; of
        # addends of one sign (two zeros) that sign
        product_sign, c_sign = bool(np.signbit(a) != np.signbit(b)), bool(np.signbit(c))
        if a * b == 0 and c == 0 and product_sign == c_sign:
            return np.float32(-0.0) if c_sign else np.float32(0.0)
        return np.float32(-0.0) if mode == "rm" else np.float32(0.0)
    return round_f32(x, mode)


def near_ties(count: int, seed: int) -> np.ndarray:
    """[4, count]: a = b = 1 + k 2^-12 (the product's bits reach 2^-24, a tie of binary32 at 1 + ...) and c a tiny
    value of either sign, which an fma must round by and a sum rounded to binary64 first loses."""
    rng = np.random.default_rng(seed)
    k = rng.integers(1, 1 << 11, count)
    a = (1 + k * 2.0 ** -12).astype(np.float32)
    c = (rng.choice([-1.0, 1.0], count) * 2.0 ** rng.integers(-90, -55, count)).astype(np.float32)
    words = np.zeros((4, count), np.uint32)
    words[0], words[1], words[2] = a.view(np.uint32), a.view(np.uint32), c.view(np.uint32)
    return words


@pytest.mark.parametrize("mode", ["rn", "rz", "rm", "rp"])
def test_fma_f32_rounds_once(mode, tmp_path, needs_ptxas):
    """fma.<mode>.f32 (FFMA, FFMA.RZ / .RM / .RP) is a * b + c rounded once (PTX ISA fma: "computes the product of
    a and b to infinite precision and then adds c to this product, again in infinite precision.  The resulting
    value is then rounded")."""
    words = np.concatenate([near_ties(512, 1), operands(1536, 2)], axis=1)
    out = run(f"fma_{mode}", "sm_86", f"fma.{mode}.f32 %f3, %f1, %f2, %f4; mov.b32 %r10, %f3;", words, tmp_path)
    a, b, c = f32(words[0]), f32(words[1]), f32(words[2])
    want = np.array([fma_exact(x, y, z, mode) for x, y, z in zip(a, b, c)], np.float32)
    same_floats(out[:, 0], want, f"fma.{mode}.f32", words)
