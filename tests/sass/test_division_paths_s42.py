"""ptxas's code for the everyday float and integer divisions runs in the simulator to the IEEE 754 / PTX ISA
result (probe s42 ptxcover).  Before, div.rn.f32 (CUDA's `a / b`), div.rn.ftz / .rz, sqrt.rn.f32, rcp.rn.f32 and
64-bit div / rem were refused -- FCHK, the CALL.REL.NOINC / RET.REL.NODEC of ptxas's slow paths, `BRA Pp,
target` and BREAK were not modeled (FFMA's rounding: tests/sass/test_ffma_rounding_s42.py).

Each kernel is ptxas's -O3 cubin of a small PTX kernel, run with the control-code checker on.  The expected
values are computed independently: Python's exact rationals (fractions.Fraction) rounded to binary32 by the
mode's rule, NumPy's binary32 division / sqrt (IEEE 754 correctly rounded, subnormals kept) and Python
integers (PTX div / rem: truncating toward zero).  The operands span every binary32 exponent, so both of
div.rn.f32's paths -- the FFMA fast path and the called slow path, which FCHK chooses between -- run."""
from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest

from tests.sass.test_ffma_rounding_s42 import (ARCHES, _kernel, f32, fma_exact, near_ties, operands,
                                               round_f32, run, same_floats)


DIVISIONS = {  # PTX -> the expected binary32 result of a, b
    "div_rn": ("div.rn.f32 %f3, %f1, %f2;", lambda a, b: a / b),
    "sqrt_rn": ("sqrt.rn.f32 %f3, %f1;", lambda a, b: np.sqrt(a)),
    "rcp_rn": ("rcp.rn.f32 %f3, %f1;", lambda a, b: np.float32(1) / a),
    "div_rz": ("div.rz.f32 %f3, %f1, %f2;", None),
}


def _div_rz(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    out = []
    for x, y in zip(a, b):
        if not (np.isfinite(x) and np.isfinite(y)) or y == 0 or x == 0:
            with np.errstate(all="ignore"):
                out.append(np.float32(x / y))
        else:
            out.append(round_f32(Fraction(float(x)) / Fraction(float(y)), "rz"))
    return np.array(out, np.float32)


@pytest.mark.parametrize("arch", ARCHES)
@pytest.mark.parametrize("name", sorted(DIVISIONS))
def test_float_division_paths(arch, name, tmp_path, needs_ptxas):
    """ptxas's fast path and its called slow path (FCHK, CALL.REL.NOINC, RET.REL.NODEC, `BRA Pp, target`,
    BREAK, FFMA.RZ / .RM / .RP) give the correctly rounded result for every operand pair (PTX .rn / .rz:
    IEEE 754 division, square root and reciprocal; NumPy's binary32 arithmetic is IEEE 754's)."""
    body, definition = DIVISIONS[name]
    words = operands(2048, 3)
    out = run(name, arch, body + " mov.b32 %r10, %f3;", words, tmp_path)
    a, b = f32(words[0]), f32(words[1])
    with np.errstate(all="ignore"):
        want = _div_rz(a, b) if definition is None else np.asarray(definition(a, b), np.float32)
    same_floats(out[:, 0], want, f"{arch} {name}", words)


def test_div_rn_ftz_flushes_and_rounds(tmp_path, needs_ptxas):
    """div.rn.ftz.f32: subnormal operands and results flushed to a zero of the same sign (PTX ISA .ftz), the rest
    IEEE 754 division.  ptxas's slow path for it leaves a loop by BREAK with a predicate (`@!P0 BREAK !P2, B2`,
    a form bobc's assembler learned in session 46, user_forms_s46.ptx; the simulator runs ptxas's cubin)."""
    words = operands(1024, 4)
    out = run("div_rn_ftz", "sm_90", "div.rn.ftz.f32 %f3, %f1, %f2; mov.b32 %r10, %f3;", words, tmp_path)
    tiny = np.float32(2.0 ** -126)
    a, b = f32(words[0]).copy(), f32(words[1]).copy()
    for v in (a, b):
        v[np.abs(v) < tiny] = np.copysign(np.float32(0), v[np.abs(v) < tiny])
    with np.errstate(all="ignore"):
        want = a / b
    want = np.where(np.abs(want) < tiny, np.copysign(np.float32(0), want), want).astype(np.float32)
    same_floats(out[:, 0], want, "div.rn.ftz.f32", words)


M64 = (1 << 64) - 1


def _s64(v: int) -> int:
    return v - (1 << 64) if v >> 63 else v


def _trunc_div(x: int, y: int) -> int:
    q = abs(x) // abs(y)
    return q if (x < 0) == (y < 0) else -q


INTEGER = {  # PTX, definition of x = b:a, y = d:c (PTX div / rem: the quotient truncated toward zero)
    "div_u64": ("div.u64 %rd20, %rd13, %rd14;", lambda x, y: x // y),
    "rem_u64": ("rem.u64 %rd20, %rd13, %rd14;", lambda x, y: x % y),
    "div_s64": ("div.s64 %rd20, %rd13, %rd14;", lambda x, y: _trunc_div(_s64(x), _s64(y))),
    "rem_s64": ("rem.s64 %rd20, %rd13, %rd14;", lambda x, y: _s64(x) - _s64(y) * _trunc_div(_s64(x), _s64(y))),
}


@pytest.mark.parametrize("arch", ARCHES)
@pytest.mark.parametrize("name", sorted(INTEGER))
def test_64_bit_integer_division(arch, name, tmp_path, needs_ptxas):
    """64-bit div / rem: ptxas's inline path for divisors below 2^32 and its called routine (I2F.U64.RP,
    MUFU.RCP, IMAD.HI chains; CALL.REL.NOINC / RET.REL.NODEC) against Python's integers."""
    pairs = _integer_pairs()
    words = np.array([[x & 0xFFFFFFFF, x >> 32, y & 0xFFFFFFFF, y >> 32] for x, y in pairs], np.uint32).T
    body, definition = INTEGER[name]
    out = run(name, arch, body + " mov.b64 {%r10, %r11}, %rd20;", words, tmp_path)
    got = [int(lo) | int(hi) << 32 for lo, hi in out]
    want = [definition(x, y) & M64 for x, y in pairs]
    bad = [(hex(x), hex(y), hex(g), hex(w)) for (x, y), g, w in zip(pairs, got, want) if g != w]
    assert not bad, f"{arch} {name}: {len(bad)} wrong, e.g. {bad[:4]}"


def test_lanes_return_to_their_own_call_sites(tmp_path, needs_ptxas):
    """Two 64-bit divisions on the two sides of a branch call one routine of ptxas's (__cuda_sm20_div_u64), which
    the two sides' lanes run together; each lane returns to its own call site (RET.REL.NODEC reads each
    thread's return address), as Python's integers say."""
    body = """and.b32 %r12, %r1, 1; setp.eq.u32 %p1, %r12, 0;
 @%p1 bra EVEN;
 div.u64 %rd20, %rd13, %rd14; bra DONE;
EVEN:
 div.u64 %rd20, %rd14, %rd13; add.s64 %rd20, %rd20, 77;
DONE:"""
    rng = np.random.default_rng(6)
    n = 256
    xs = [int(v) for v in rng.integers(1, 1 << 63, n, dtype=np.uint64)]
    ys = [int(v) >> int(s) for v, s in zip(rng.integers(1, 1 << 63, n, dtype=np.uint64), rng.integers(0, 40, n))]
    ys = [max(y, 1) for y in ys]
    words = np.array([[x & 0xFFFFFFFF, x >> 32, y & 0xFFFFFFFF, y >> 32] for x, y in zip(xs, ys)], np.uint32).T
    out = run("two_sites", "sm_86", body + " mov.b64 {%r10, %r11}, %rd20;", words, tmp_path)
    got = [int(lo) | int(hi) << 32 for lo, hi in out]
    want = [(x // y if i % 2 else (y // x + 77)) & M64 for i, (x, y) in enumerate(zip(xs, ys))]
    assert got == want


# ----------------------------------------------------------------- the same kernels on the GPU
def _float_want(name: str, words: np.ndarray) -> np.ndarray:
    a, b, c = f32(words[0]), f32(words[1]), f32(words[2])
    if name.startswith("fma_"):
        return np.array([fma_exact(x, y, z, name[4:]) for x, y, z in zip(a, b, c)], np.float32)
    body, definition = DIVISIONS[name]
    with np.errstate(all="ignore"):
        return _div_rz(a, b) if definition is None else np.asarray(definition(a, b), np.float32)


def sm90_cases() -> dict:
    """name -> (PTX for sm_90, input words [4, n], the words each thread must store [n, 2] (a float's second word
    0), whether it is a float result (any NaN for a NaN), whether bobc's assembler has every form of ptxas's
    code (tests/gpu/prepare.sh assembles those, test_bobc_assembles_the_gpu_cases holds each to ptxas's .text on
    both targets): every case -- 64-bit div / rem's I2F.U64.RP since session 43 (wide_cover_forms.ptx), div.rz.f32's
    BREAK B2 since session 45 (user_forms_s45.ptx)).  div.rn.ftz.f32 (test_div_rn_ftz_flushes_and_rounds) is no
    GPU case (its slow path's `BREAK !P2, B2`, BREAK with a predicate, is learned since session 46, user_forms_s46.ptx,
    and the case is not added here).  tests/gpu/test_sim_probes_gpu.py
    runs them on the GPU against the same definitions this file holds the simulator to."""
    out = {}
    for mode in ("rn", "rz", "rm", "rp"):
        words = np.concatenate([near_ties(512, 1), operands(1536, 2)], axis=1)
        want = np.zeros((words.shape[1], 2), np.uint32)
        want[:, 0] = _float_want(f"fma_{mode}", words).view(np.uint32)
        out[f"fma_{mode}"] = (_kernel(f"fma_{mode}", "sm_90", f"fma.{mode}.f32 %f3, %f1, %f2, %f4; mov.b32 %r10, %f3;"),
                              words, want, True, True)
    for name, (body, _) in DIVISIONS.items():
        words = operands(2048, 3)
        want = np.zeros((words.shape[1], 2), np.uint32)
        want[:, 0] = _float_want(name, words).view(np.uint32)
        out[name] = (_kernel(name, "sm_90", body + " mov.b32 %r10, %f3;"), words, want, True, True)
    for name, (body, definition) in INTEGER.items():
        pairs = [(x, y) for x, y in _integer_pairs()]
        words = np.array([[x & 0xFFFFFFFF, x >> 32, y & 0xFFFFFFFF, y >> 32] for x, y in pairs], np.uint32).T
        results = [definition(x, y) & M64 for x, y in pairs]
        want = np.array([[r & 0xFFFFFFFF, r >> 32] for r in results], np.uint32)
        out[name] = (_kernel(name, "sm_90", body + " mov.b64 {%r10, %r11}, %rd20;"), words, want, False, True)
    return out


def _integer_pairs(n: int = 512) -> list[tuple[int, int]]:
    rng = np.random.default_rng(5)
    edges = [0, 1, 2, 3, 7, 0xFFFFFFFF, 1 << 32, (1 << 32) + 1, 1 << 63, (1 << 63) - 1, M64, M64 - 1, 10 ** 18]
    xs = [e for e in edges for _ in edges] + [int(v) for v in rng.integers(0, 1 << 63, n, dtype=np.uint64) * 2 + 1]
    ys = [e for _ in edges for e in edges] + [int(v) >> int(s) for v, s in
                                              zip(rng.integers(1, 1 << 63, n, dtype=np.uint64), rng.integers(0, 63, n))]
    return [(x, y) for x, y in zip(xs, ys) if y != 0][:n]


def same_words(got: np.ndarray, want: np.ndarray, is_float: bool) -> list[str]:
    """The threads whose stored words differ from `want` (for a float, any NaN stands for a NaN)."""
    bad = (got != want).any(axis=1)
    if is_float:
        g, w = f32(got[:, 0]), f32(want[:, 0])
        bad &= ~(np.isnan(g) & np.isnan(w))
    return [f"thread {i}: got {int(got[i, 1]):08x}{int(got[i, 0]):08x}, want {int(want[i, 1]):08x}{int(want[i, 0]):08x}"
            for i in np.flatnonzero(bad)]


@pytest.mark.parametrize("arch", ARCHES)
@pytest.mark.parametrize("name", sorted(k for k, case in sm90_cases().items() if case[4]))
def test_bobc_assembles_the_gpu_cases(name, arch, tmp_path, needs_ptxas, needs_nvdisasm):
    """The cases tests/gpu/prepare.sh assembles with bobc (sm90_cases' flag): nvdisasm's listing of ptxas's cubin
    assembles to ptxas's own .text (the oracle: ptxas's bytes), so the GPU runs the same code from both cubins; on
    sm_86 too (the same PTX for that target).  div.rz.f32's slow path leaves its loop by `BREAK B2` (refused before
    session 45) and 64-bit div / rem's routine starts with `I2F.U64.RP R, R` (learned in session 43)."""
    from tests.sass.test_math_forms import _images, _text
    ptx = tmp_path / f"{name}.ptx"
    ptx.write_text(sm90_cases()[name][0].replace(".target sm_90", f".target {arch}"))
    ptxas_image, bobc_image = _images(arch, name, tmp_path, ptx=ptx)
    assert _text(bobc_image, name) == _text(ptxas_image, name)
