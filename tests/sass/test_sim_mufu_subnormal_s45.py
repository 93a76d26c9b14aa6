"""The binary32 MUFU's subnormal operands and results (commit df4255bc, probe s45 newuser10), as probe kernels the GPU
run confirms (tests/gpu/test_sim_probes_gpu.py, test_s45_mufu_subnormals_match_the_simulator).

The simulator's rule (docs/simulator.md, "Arithmetic and its precision") rests on the PTX ISA alone: lg2 / rcp /
rsqrt / sqrt .approx.ftz.f32 flush a subnormal operand (rcp its subnormal result too) to a zero of its sign, and
ex2.approx.ftz.f32 a subnormal result; ptxas compiles each .ftz form to the lone MUFU, and wraps the forms without
.ftz in a scaling (an operand below 2^-126 by 2^24, rcp's above 2^126 by 1/4, ex2's below -126 halved and the result
squared), so those keep subnormals.  Whether the unit itself flushes is what only the hardware shows.

Each kernel (tests/sass/test_sim_roundings_s44.kernel: a, b, c words per thread, the first word stored) applies one
form to the a word: subnormals of both signs (the smallest, the largest, a few between), the least normals, operands
whose reciprocal is subnormal (2^126 and up), ex2 operands whose result is subnormal (below -126), +-0, +-inf, NaN and
a few ordinary values.  The oracle is this file's, from the PTX ISA: `exact` lanes (a flushed operand or result, or
a special) have one right word, computed here; every other lane is an approximation held to two units in the last
place of the true value (binary64 math; the simulator rounds that value once, ptxas's wrappers add one rounding of
an exact power-of-two scaling, or ex2's squaring).  The GPU test compares the GPU's words with the simulator's
(tests/gpu/prepare.sh runs each ptxas cubin in the simulator: .device/sim-probes/NAME.sim.npy): equal on the exact
lanes, within EIGHT_ULPS elsewhere (the PTX ISA's bounds: rcp / sqrt about an ulp, rsqrt 2^-22.9, lg2 2^-22.6
absolute, ex2 2^-22.5 relative), every differing word recorded."""
from __future__ import annotations

import math

import numpy as np
import pytest

from tests.sass.test_sim_roundings_s44 import kernel, run

ARCHES = ("sm_86", "sm_90")
TINY = 2.0 ** -126
# name: (function, .ftz) -- the PTX is "<function>.approx[.ftz].f32 %f3, %f1"
FORMS = {f"{f}{'_ftz' if ftz else ''}": (f, ftz) for f in ("lg2", "rcp", "rsqrt", "sqrt", "ex2") for ftz in (True, False)}
EIGHT_ULPS = 8


def body(name: str) -> str:
    function, ftz = FORMS[name]
    return f"{function}.approx{'.ftz' if ftz else ''}.f32 %f3, %f1; mov.b32 %r10, %f3;"


def operand_words(count: int = 256) -> np.ndarray:
    """[4, count] uint32: the a word as listed in the module's docstring (both signs of each), ordinary values after."""
    rng = np.random.default_rng(45)
    subnormal = [0x1, 0x2, 0x3, 0x100, 0x12345, 0x3FFFFF, 0x400000, 0x654321, 0x7FFFFE, 0x7FFFFF,
                 *rng.integers(1, 0x800000, 8).tolist()]
    normal_edge = [0x800000, 0x800001, 0x1000000, 0x1800000]
    huge = [0x7E800000, 0x7E800001, 0x7E8CCCCD, 0x7EC00000, 0x7F000000, 0x7F3FFFFF, 0x7F7FFFFF, 0x7E7FFFFF,
            *(rng.integers(0x7E800000, 0x7F800000, 6)).tolist()]
    ex2_tiny = np.array([-126.5, -127.0, -130.25, -140.0, -149.0, -149.5, -150.0, -151.0, -200.0, -125.75, -126.0,
                         -126.0001], np.float32).view(np.uint32).tolist()
    specials = [0x0, 0x7F800000, 0x7FC00000, 0x7FA00001]
    ordinary = np.array([1.5, 3.0, 1000.0, 0.1, 7e-30, 2.5e30, 0.7, 12.0], np.float32).view(np.uint32).tolist()
    listed = [w | s for w in subnormal + normal_edge + huge + specials + ordinary for s in (0, 0x80000000)]
    listed += ex2_tiny
    words = np.zeros((4, count), np.uint32)
    words[0, :len(listed)] = listed
    rest = count - len(listed)
    words[0, len(listed):] = (rng.integers(0, 0x800000, rest) | (rng.integers(0, 2, rest) << 31)).astype(np.uint32)
    return words


def _f32(word: int) -> float:
    return float(np.array([word], np.uint32).view(np.float32)[0])


def _word(x: float) -> int:
    with np.errstate(over="ignore"):
        return int(np.array([x], np.float32).view(np.uint32)[0])


def _true(function: str, x: float) -> float:
    """The exact function's value at x, in binary64 (x a binary32 value)."""
    with np.errstate(all="ignore"):
        v = np.float64(x)
        return float({"lg2": np.log2, "rcp": lambda t: 1 / t, "rsqrt": lambda t: 1 / np.sqrt(t), "sqrt": np.sqrt,
                      "ex2": np.exp2}[function](v))


def oracle(name: str, word: int) -> tuple[int | None, float]:
    """(the one right word, or None where the result is an approximation; the true value there) of form `name` at
    the a word.  NaN results are given as 0x7fffffff (any NaN meets them)."""
    function, ftz = FORMS[name]
    x = _f32(word)
    if ftz and function != "ex2" and x != 0 and abs(x) < TINY:
        x = math.copysign(0.0, x)                       # the .ftz operand flush
    true = _true(function, x)
    if math.isnan(true):
        return 0x7FFFFFFF, true
    if math.isinf(x) or x == 0 or math.isinf(true) or true == 0:
        return _word(true), true                        # the PTX ISA's specials: exact
    if function == "rcp" and abs(true) < TINY * (1 - 2.0 ** -20):
        return (_word(math.copysign(0.0, true)), true) if ftz else (None, true)
    # (rcp.ftz within 2^-20 below 2^-126: the approximation may round to 2^-126 itself or below it and flush --
    # band_lanes; either is right)
    if function == "ex2" and true < TINY * (1 - 2.0 ** -20):
        return (0, true) if ftz else (None, true)
    if function == "ex2" and abs(x) < TINY:
        return 0x3F800000, true                         # ex2 of a subnormal (or its flushed zero) is 1.0 to the ulp
    return None, true


def _is_nan(word: int) -> bool:
    return (word & 0x7F800000) == 0x7F800000 and word & 0x7FFFFF != 0


def ulps(a: int, b: int) -> int:
    """How many binary32 values lie from word a to word b (zeros of either sign are 0 apart; NaNs 0 from NaNs)."""
    if _is_nan(a) or _is_nan(b):
        return 0 if _is_nan(a) and _is_nan(b) else 1 << 32

    def line(w):
        return -(w & 0x7FFFFFFF) if w >> 31 else w & 0x7FFFFFFF
    return abs(line(a) - line(b))


def exact_lanes(name: str, words: np.ndarray) -> np.ndarray:
    """Which lanes have one right word (the flushed operands / results and the specials)."""
    return np.array([oracle(name, int(w))[0] is not None for w in words[0]])


def band_lanes(name: str, words: np.ndarray) -> np.ndarray:
    """rcp.approx.ftz.f32 lanes whose true value lies within 2^-20 below 2^-126: a zero of its sign (the simulator's
    flushed rounding) or the approximation's 2^-126 are both the PTX ISA's; the GPU's word is recorded, not held."""
    function, ftz = FORMS[name]
    return np.array([function == "rcp" and ftz and oracle(name, int(w))[0] is None and
                     abs(oracle(name, int(w))[1]) < TINY for w in words[0]])


def faults(name: str, words: np.ndarray, got: np.ndarray) -> list[str]:
    """Lanes where `got` breaks the oracle: an exact lane's word, else more than two ulps from the true value (a
    band lane's zero of its sign too)."""
    bad = []
    band = band_lanes(name, words)
    for w, g, in_band in zip(words[0].tolist(), np.asarray(got).tolist(), band):
        want, true = oracle(name, w)
        if want is not None:
            ok = _is_nan(g) if want == 0x7FFFFFFF else g == want
            what = f"PTX ISA {want:#010x}"
        else:
            ok = ulps(g, _word(true)) <= 2 or (in_band and g == _word(math.copysign(0.0, true)))
            what = f"true {true!r}"
        if not ok:
            bad.append(f"  {name}: x={w:#010x} ({_f32(w)!r}) -> {g:#010x} ({_f32(g)!r}), {what}")
    return bad


@pytest.mark.parametrize("arch", ARCHES)
@pytest.mark.parametrize("name", sorted(FORMS))
def test_mufu_subnormal_operands_in_the_simulator(name, arch, tmp_path, needs_ptxas):
    """ptxas's -O3 code of each form run in the simulator: .ftz forms flush (lg2 of 2^-149 is -inf, rcp of 2^127
    +0, sqrt of -2^-149 -0), the others keep subnormals through ptxas's scaling (lg2.approx.f32 of 2^-149 is -149)."""
    words = operand_words()
    got = run(f"s45_{name}", arch, body(name), words, tmp_path)
    bad = faults(name, words, got)
    assert not bad, f"{arch}: {len(bad)} lanes\n" + "\n".join(bad[:12])


def test_the_probe_has_flushed_lanes_of_each_kind():
    """The exact lanes include a flushed operand for every .ftz form, and the forms without .ftz keep them."""
    words = operand_words()
    smallest = int(np.flatnonzero(words[0] == 1)[0])
    for function in ("lg2", "rcp", "rsqrt", "sqrt"):
        assert exact_lanes(f"{function}_ftz", words)[smallest]
        assert not exact_lanes(function, words)[smallest]
    assert oracle("lg2_ftz", 1)[0] == 0xFF800000 and oracle("sqrt_ftz", 0x80000001)[0] == 0x80000000
    assert oracle("rcp_ftz", 0x7F000000)[0] == 0 and oracle("rcp_ftz", 0xFF000000)[0] == 0x80000000
    assert oracle("ex2_ftz", _word(-130.25))[0] == 0 and oracle("ex2", _word(-130.25))[0] is None


# ----------------------------------------------------------------- the GPU's (tests/gpu/test_sim_probes_gpu.py)
def sm90_cases() -> dict:
    """name -> (PTX for sm_90, input words [4, 256]): the kernels above for tests/gpu/prepare.sh (ptxas's cubin,
    bobc's, and the simulator's words of ptxas's, NAME.sim.npy) and tests/gpu/test_sim_probes_gpu.py."""
    return {f"s45_{name}": (kernel(f"s45_{name}", "sm_90", body(name)), operand_words()) for name in sorted(FORMS)}


def gpu_faults(name: str, words: np.ndarray, got: np.ndarray, simulated: np.ndarray) -> tuple[list, list]:
    """(lines where the GPU's words break the simulator's: an exact lane's word, else more than EIGHT_ULPS from it;
    every differing lane's line, to record) for form `name` (without the s45_ prefix)."""
    exact, band = exact_lanes(name, words), band_lanes(name, words)
    bad, differ = [], []
    for a, g, s, e, b in zip(words[0].tolist(), np.asarray(got).tolist(), np.asarray(simulated).tolist(), exact, band):
        if g == s or (_is_nan(g) and _is_nan(s)):
            continue
        line = f"  x={a:#010x} ({_f32(a)!r}): GPU {g:#010x} ({_f32(g)!r}) simulator {s:#010x} ({_f32(s)!r}), " \
               f"{'exact' if e else 'band' if b else 'approximate'} lane, {ulps(g, s)} ulps"
        differ.append(line)
        if e or (not b and ulps(g, s) > EIGHT_ULPS):
            bad.append(line)
    return bad, differ
