"""ptxas's binary64 division, reciprocal and square root run in the simulator to the IEEE 754 result (probe s43
f64div).  Before, every one was refused: ptxas starts div / rcp / sqrt .f64 (all four roundings) and
rsqrt.approx.f64 from MUFU.RCP64H / MUFU.RSQ64H, which the executor did not model, and its directed-rounding
paths use DFMA.RZ / .RM / .RP and DMUL.RZ / .RM / .RP (div.rn.f64's slow path too: DMUL.RP for a subnormal
quotient), which it refused as "a rounding modifier".

The two MUFU functions are modelled as the PTX ISA describes rcp.approx.ftz.f64 (which ptxas compiles to a
lone MUFU.RCP64H, as rsqrt.approx.ftz.f64 to a lone MUFU.RSQ64H): the operand's high word read as a binary64
with a zero low word, an approximation of the result placed in the high word, subnormals flushed.  NVIDIA
publishes no table for them; the simulator's word (executor._mufu64h) is the exact value cut to its high word
(never above it, within 2^-20), and from it ptxas's Newton iterations give the correctly rounded quotient,
reciprocal and root -- which is what these tests hold the simulator to.  The seed's accuracy matters: a seed
3 * 2^-20 low makes ptxas's rcp.rn.f64(3.9999999999999996) 0.25, one ulp low (SPECIAL holds that operand and
2^1023 / MAX, which a seed one unit off at random breaks for div.rn).  tests/gpu/test_sim_probes_gpu.py runs
the same kernels on the GPU and records the hardware's MUFU words beside the simulator's.

Each kernel is ptxas's -O3 cubin of a small PTX kernel, run with the control-code checker on (sm_86's rcp.rn.f64
was refused by it until the checker tracked pending writes per path: tests/sass/test_checker_lanes_s43.py).  sm_90's div.rn.f64 slow
path needs VIADDMNMX too (min / max of a sum), now modelled.
The expected values are computed independently of the executor: Python's exact rationals (fractions.Fraction)
and integer square roots, rounded to binary64 by this file's own `round64` (IEEE 754 4.3: to nearest, ties
to even; toward zero, -inf, +inf; subnormals kept; overflow by the mode's rule); the special operands (NaN,
infinities, zeros, negative square roots) by IEEE 754 7.2-7.3 and 6.1-6.3 (NumPy's binary64 division and sqrt,
which follow them).  The operands span every binary64 exponent, subnormals, zeros, infinities and NaNs
included, so ptxas's fast paths and its called slow paths all run."""
from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest

from tests.sass.test_ffma_rounding_s42 import ARCHES, BLOCK, _kernel

MODES = ("rn", "rz", "rm", "rp")
MAX = Fraction(2) ** 1024 - Fraction(2) ** 971          # binary64's largest finite value


def kernel(name: str, arch: str, body: str) -> str:
    """tests/sass/test_ffma_rounding_s42._kernel with binary64 registers: a = in[i], in[i + n] (low, high word), b
    = in[i + 2n], in[i + 3n]; the result's two words stored from %fd3."""
    text = _kernel(name, arch, "mov.b64 %fd1, %rd13; mov.b64 %fd2, %rd14; " + body + " mov.b64 {%r10, %r11}, %fd3;")
    return text.replace(".reg .pred %p<4>;", ".reg .pred %p<4>; .reg .f64 %fd<8>;")


def run(name: str, arch: str, body: str, words: np.ndarray, tmp_path, check_hazards: bool = True) -> np.ndarray:
    """The binary64 each thread stored."""
    from bobc.sim.kernel import run_kernel
    import subprocess
    from bobc.nvtools import ptxas
    ptx, cubin = tmp_path / f"{name}.ptx", tmp_path / f"{name}.cubin"
    ptx.write_text(kernel(name, arch, body))
    subprocess.run([ptxas(), f"-arch={arch}", "-O3", "-o", str(cubin), str(ptx)], check=True, capture_output=True)
    n = words.shape[1]
    out = run_kernel(cubin.read_bytes(), arch, grid=n // BLOCK, block=BLOCK, params=["out", "in", np.uint32(n)],
                     buffers={"out": np.zeros(2 * n, np.uint32), "in": words.astype(np.uint32).reshape(-1)},
                     kernel_name=name, check_hazards=check_hazards)["out"]
    return out.reshape(n, 2).copy().view(np.uint64)[:, 0]


# ----------------------------------------------------------------- operands
SPECIAL = [0.0, -0.0, 1.0, -1.0, 3.0, 7.0, 0.1, 1 / 3, 2.0, 0.5, 1e308, -1e308, 1.7976931348623157e308, 2.0 ** -1022,
           2.0 ** -1023, 5e-324, -5e-324, 2.2250738585072009e-308, 1e-300, 1e300, 2.0 ** 1023, 2.0 ** -1074 * 3,
           math.inf, -math.inf, math.nan, 4.0, 9.0, 1e-320, 2.0 ** 511, 2.0 ** -537, 6.0, 1.5,
           3.9999999999999996, 1.9999999999999998]               # near ties of 1 / b, 1 / 2^-1022 ...


def operands(count: int, seed: int) -> np.ndarray:
    """[4, count] words: a and b binary64 values of every exponent (random signs and fractions, the biased
    exponent uniform over 0..2047, so zeros, subnormals, infinities and NaNs too; then exponents near 0x3ff, where
    most arithmetic lives) after every pair of SPECIAL."""
    rng = np.random.default_rng(seed)
    pairs = np.array([(a, b) for a in SPECIAL for b in SPECIAL], np.float64).view(np.uint64)
    rest = count - len(pairs)
    sign = rng.integers(0, 2, (2, rest), dtype=np.uint64) << np.uint64(63)
    exponent = rng.integers(0, 2048, (2, rest), dtype=np.uint64)
    exponent[:, rest // 2:] = rng.integers(0x3F0, 0x410, (2, rest - rest // 2), dtype=np.uint64)
    fraction = rng.integers(0, 1 << 52, (2, rest), dtype=np.uint64)
    values = np.concatenate([pairs.T, sign | exponent << np.uint64(52) | fraction], axis=1)
    words = np.zeros((4, count), np.uint32)
    for k in (0, 1):
        words[2 * k] = (values[k] & np.uint64(0xFFFFFFFF)).astype(np.uint32)
        words[2 * k + 1] = (values[k] >> np.uint64(32)).astype(np.uint32)
    return words


def f64(words: np.ndarray, k: int) -> np.ndarray:
    return (words[2 * k].astype(np.uint64) | words[2 * k + 1].astype(np.uint64) << np.uint64(32)).view(np.float64)


# ----------------------------------------------------------------- the oracle: exact values rounded to binary64
def round64(x: Fraction, mode: str, irrational_above: bool = False) -> float:
    """x (or, with `irrational_above`, a value just above x, as an inexact square root is above its floor) rounded
    to binary64 by `mode`: the exponent q of its last place (at least -1074: subnormals), the significand m = floor(x
    / 2^q) and the rest decide, IEEE 754 4.3; past MAX to nearest and away from zero is an infinity, toward zero
    MAX."""
    if x == 0 and not irrational_above:
        raise ValueError("an exact zero's sign is the operation's")
    negative = x < 0
    ax = -x if negative else x
    e = ax.numerator.bit_length() - ax.denominator.bit_length()
    while Fraction(2) ** e > ax:
        e -= 1
    while Fraction(2) ** (e + 1) <= ax:
        e += 1
    q = max(e - 52, -1074)
    scaled = ax / Fraction(2) ** q
    m = scaled.numerator // scaled.denominator
    rest = scaled - m
    inexact = rest != 0 or irrational_above
    away = {"rz": False, "rm": negative, "rp": not negative}.get(mode)
    if mode == "rn":
        half = Fraction(1, 2)
        up = rest > half or (rest == half and (irrational_above or m % 2 == 1))
    else:
        up = away and inexact
    m += up
    if m * Fraction(2) ** q > MAX:
        big = math.inf if mode == "rn" or away else float(MAX)
        return -big if negative else big
    value = math.ldexp(m, q)
    return -value if negative else value


def divide(a: float, b: float, mode: str) -> float:
    if not (math.isfinite(a) and math.isfinite(b)) or a == 0 or b == 0:
        with np.errstate(all="ignore"):
            return float(np.float64(a) / np.float64(b))        # IEEE 754 7.2 / 7.3 and 6.1 (exact, any mode)
    return round64(Fraction(a) / Fraction(b), mode)


def square_root(a: float, mode: str) -> float:
    if math.isnan(a) or a < 0:
        return math.nan                                        # IEEE 754 7.2: sqrt of x < 0 (-inf too)
    if a == 0 or math.isinf(a):
        return a                                               # sqrt(+-0) = +-0, sqrt(+inf) = +inf
    x = Fraction(a)
    e = math.frexp(a)[1] - 1
    q = max(e // 2 - 52, -1074)
    n = x / Fraction(4) ** q                                   # sqrt(x) = 2^q sqrt(n), sqrt(n) in [2^52, 2^53)
    m = math.isqrt(n.numerator // n.denominator)               # floor(sqrt(n)) = isqrt(floor(n))
    if Fraction(m * m) == n:
        return round64(Fraction(m) * Fraction(2) ** q, mode)
    # sqrt(n) lies strictly between m and m + 1: the rounding of m + (a value in (0, 1)); to nearest it is m + 1/2
    # exactly when n = (m + 1/2)^2, else above or below it
    half = Fraction(2 * m + 1, 2)
    if mode == "rn":
        if half * half == n:
            return round64(half * Fraction(2) ** q, mode)
        below = n < half * half
        base = Fraction(m) if below else half
        return round64(base * Fraction(2) ** q, mode, irrational_above=True)
    return round64(Fraction(m) * Fraction(2) ** q, mode, irrational_above=True)


DEFINITIONS = {  # name -> (PTX, the binary64 a, b give, by the mode)
    **{f"div_{m}": (f"div.{m}.f64 %fd3, %fd1, %fd2;", lambda a, b, m=m: divide(a, b, m)) for m in MODES},
    **{f"rcp_{m}": (f"rcp.{m}.f64 %fd3, %fd1;", lambda a, b, m=m: divide(1.0, a, m)) for m in MODES},
    **{f"sqrt_{m}": (f"sqrt.{m}.f64 %fd3, %fd1;", lambda a, b, m=m: square_root(a, m)) for m in MODES},
}


def expected(name: str, words: np.ndarray) -> np.ndarray:
    definition = DEFINITIONS[name][1]
    return np.array([definition(float(a), float(b)) for a, b in zip(f64(words, 0), f64(words, 1))], np.float64)


def same_doubles(got: np.ndarray, want: np.ndarray, what: str, words: np.ndarray) -> list[str]:
    """Bit for bit, any NaN for a NaN (the PTX ISA fixes no NaN's bits)."""
    g, w = got.view(np.float64), want.view(np.float64)
    bad = ~((got == want.view(np.uint64)) | (np.isnan(g) & np.isnan(w)))
    a, b = f64(words, 0), f64(words, 1)
    return [f"{what}: a={a[i]!r} b={b[i]!r}: got {int(got[i]):016x} ({g[i]!r}), want {int(want.view(np.uint64)[i]):016x}"
            f" ({w[i]!r})" for i in np.flatnonzero(bad)]


def test_oracle_agrees_with_python_where_python_is_ieee():
    """round64 / square_root to nearest are CPython's float(Fraction) and math.sqrt (both correctly rounded,
    IEEE 754) on ordinary values; the directed modes bracket them."""
    rng = np.random.default_rng(9)
    for a, b in rng.uniform(-1e3, 1e3, (200, 2)):
        x = Fraction(float(a)) / Fraction(float(b))
        assert round64(x, "rn") == float(x)
        assert round64(x, "rm") <= float(x) <= round64(x, "rp")
        assert square_root(abs(float(a)), "rn") == math.sqrt(abs(float(a)))
    assert round64(Fraction(3, 4) * Fraction(2) ** -1074, "rn") == 5e-324
    assert round64(Fraction(3, 4) * Fraction(2) ** -1074, "rz") == 0.0
    assert round64(-Fraction(1, 4) * Fraction(2) ** -1074, "rm") == -5e-324
    assert round64(MAX * 2, "rz") == float(MAX) and round64(MAX * 2, "rn") == math.inf
    for a in (2.0, 3.0, 1e-310, 7e300):                   # the directed roots bracket sqrt(a), one ulp apart
        low, high = square_root(a, "rz"), square_root(a, "rp")
        assert Fraction(low) ** 2 < Fraction(a) < Fraction(high) ** 2 and math.nextafter(low, math.inf) == high
        assert square_root(a, "rm") == low and square_root(a, "rn") in (low, high)


# Kernels whose ptxas code the control-code checker refuses (probe s43 f64div: /work/notes/s43/probe-f64div.md): they
# run here with the checker off, and test_checker_still_refuses says when that changes.  None now: sm_86's rcp.rn.f64
# slow path, which writes R7 by MUFU.RCP64H on one side of a branch while the other side's threads' DFMA R6 (SB1) may
# still land, is accepted since probe s43 hazardlanes (the checker holds each outstanding write to the threads that
# issued it: tests/sass/test_checker_lanes_s43.py).  (Accepted since probe s43 f64div: a variable-latency write behind
# a late read or a pending write of the same in-order queue -- sm_90's directed paths' `LDG.E R5, [R4.64]` on read
# scoreboard 0, then `LDG.E R4` with no wait; sm_86's rsqrt.approx.f64 `DMUL R4` on SB0, then `DADD R4` on the other
# path.)
@pytest.mark.parametrize("arch", ARCHES)
@pytest.mark.parametrize("name", sorted(DEFINITIONS))
def test_f64_division_paths(arch, name, tmp_path, needs_ptxas):
    """div / rcp / sqrt .rn / .rz / .rm / .rp .f64: ptxas's MUFU.RCP64H / MUFU.RSQ64H start, its DFMA Newton steps,
    its directed DFMA / DMUL roundings and its called slow paths give the IEEE 754 result for every operand."""
    words = operands(2048, 43)
    got = run(name, arch, DEFINITIONS[name][0], words, tmp_path, check_hazards=True)
    bad = same_doubles(got, expected(name, words), f"{arch} {name}", words)
    assert not bad, f"{len(bad)} of {words.shape[1]} wrong\n" + "\n".join(bad[:8])


def test_a_coarser_seed_breaks_rcp_rn(tmp_path, monkeypatch, needs_ptxas):
    """The seed's accuracy is not free: with MUFU.RCP64H's word 3 units (3 * 2^-20) low, ptxas's rcp.rn.f64 gives
    0.25 for 1 / 3.9999999999999996, whose IEEE result is 0.25 + 2^-54 rounded up to 0x3fd0000000000001 (exact
    rationals) -- so these operands catch a model coarser than the simulator's."""
    import bobc.sim.executor as executor
    exact = executor._mufu64h
    coarse = lambda function, high: np.where((exact(function, high) & 0x7FF00000) % 0x7FF00000 != 0,  # noqa: E731
                                             exact(function, high) - np.uint32(3), exact(function, high)).astype(np.uint32)
    monkeypatch.setattr(executor, "_mufu64h", coarse)
    words = operands(2048, 43)
    got = run("rcp_rn", "sm_86", DEFINITIONS["rcp_rn"][0], words, tmp_path, check_hazards=False)
    bad = same_doubles(got, expected("rcp_rn", words), "coarse", words)
    assert any("a=" in line and "3.9999999999999996" in line.split(" b=")[0] and "got 3fd0000000000000" in line
               for line in bad)


def rsqrt_approx_faults(words: np.ndarray, got: np.ndarray, bound: bool = True) -> list[str]:
    """rsqrt.approx.f64 of a = the binary64 of words 0, 1: within 2^-50 of 1 / sqrt(a) (IEEE 754's exact value; the
    PTX ISA states no bound for it, and ptxas's DFMA polynomial step from a MUFU.RSQ64H start within 2^-20 leaves
    an error near 2^-60 before rounding), and the specials of the PTX ISA's table: +-0 -> +-inf, +inf -> +0, a
    negative number or NaN -> NaN.  Without `bound` the specials alone (the GPU run: the PTX ISA fixes no bound)."""
    bad = []
    for a, y in zip(f64(words, 0), got.view(np.float64)):
        a, y = float(a), float(y)
        if math.isnan(a) or a < 0:
            ok = math.isnan(y)
        elif a == 0 or math.isinf(a):
            ok = y == math.copysign(math.inf, a) if a == 0 else y == 0 and math.copysign(1, y) > 0
        else:
            ok = not bound or abs(Fraction(y) ** 2 * Fraction(a) - 1) < Fraction(2) ** -49     # y ~ 1 / sqrt(a)
        if not ok:
            bad.append(f"rsqrt.approx.f64({a!r}) = {y!r}")
    return bad


def test_rsqrt_approx_f64_is_near_the_exact_value(tmp_path, needs_ptxas):
    """rsqrt.approx.f64 (MUFU.RSQ64H, one DFMA polynomial step, a called slow path for the extremes): rsqrt_approx_faults."""
    words = operands(2048, 44)
    for arch in ARCHES:
        got = run("rsqrt_approx", arch, "rsqrt.approx.f64 %fd3, %fd1;", words, tmp_path,
                  check_hazards=True)
        bad = rsqrt_approx_faults(words, got)
        assert not bad, arch + "\n".join(bad[:8])


APPROXIMATIONS = {  # PTX the SASS of which is a lone MUFU.*64H of the operand's high word, the low word zeroed
    "rcp_approx_ftz": ("rcp.approx.ftz.f64 %fd3, %fd1;", "MUFU.RCP64H"),
    "rsqrt_approx_ftz": ("rsqrt.approx.ftz.f64 %fd3, %fd1;", "MUFU.RSQ64H"),
}


def approximation_faults(name: str, words: np.ndarray, got: np.ndarray, bound: bool = True) -> list[str]:
    """What the PTX ISA fixes of rcp.approx.ftz.f64 (and, by the same reading, of rsqrt.approx.ftz.f64, MUFU.RSQ64H):
    the result's low word zero; x = the operand's high word with a zero low word; a subnormal x flushed to a zero of
    its sign; +-0 -> +-inf, +-inf -> +-0 (rcp), +-0 -> +-inf, +inf -> +0, x < 0 -> NaN (rsqrt); a NaN gives a NaN.
    With `bound`, also within 2^-20 of the exact 1 / x (1 / sqrt(x)), a result below 2^-1022 flushed: the
    simulator's model (its word is the exact value's binary64 cut to 20 fraction bits); the GPU run asserts the
    rest and records the words beyond the bound instead."""
    out = []
    for h, r in zip(words[1], got):
        x = float(np.array([int(h) << 32], np.uint64).view(np.float64)[0])
        y = float(np.array([int(r)], np.uint64).view(np.float64)[0])
        if int(r) & 0xFFFFFFFF:
            out.append(f"{name}: x high word {int(h):08x}: low word {int(r) & 0xFFFFFFFF:08x}, not 0")
            continue
        if x != 0 and abs(x) < 2.0 ** -1022:
            x = math.copysign(0.0, x)
        if math.isnan(x) or (name.startswith("rsqrt") and x < 0):
            ok = math.isnan(y)
        elif x == 0:
            ok = y == math.copysign(math.inf, x)
        elif math.isinf(x):
            ok = y == 0 and math.copysign(1, y) == math.copysign(1, x)
        elif not bound:
            ok = True
        elif name.startswith("rcp"):
            exact = Fraction(1) / Fraction(x)
            ok = (abs(exact) < Fraction(2) ** -1022 and y == 0) or \
                (y != 0 and abs(Fraction(y) / exact - 1) < Fraction(2) ** -20)
        else:
            ok = abs(Fraction(y) ** 2 * Fraction(x) - 1) < Fraction(2) ** -19      # (1 +- 2^-20)^2 - 1
        if not ok:
            out.append(f"{name}: x={x!r} (high word {int(h):08x}): got {int(r):016x} ({y!r})")
    return out


def simulator_words(name: str, words: np.ndarray) -> np.ndarray:
    """The binary64 bits the simulator's MUFU.*64H gives each thread of an APPROXIMATIONS kernel (its high word over a
    zero low word), for the GPU run's record."""
    from bobc.sim.executor import _mufu64h
    high = _mufu64h(APPROXIMATIONS[name][1].split(".")[1], words[1])
    return high.astype(np.uint64) << np.uint64(32)


@pytest.mark.parametrize("arch", ARCHES)
@pytest.mark.parametrize("name", sorted(APPROXIMATIONS))
def test_mufu_64h_approximations(arch, name, tmp_path, needs_ptxas):
    """rcp.approx.ftz.f64 / rsqrt.approx.ftz.f64: ptxas writes a lone MUFU.RCP64H / MUFU.RSQ64H (checked in the
    listing), whose result the simulator gives within the PTX ISA's description (approximation_faults)."""
    import subprocess
    from bobc.nvtools import nvdisasm
    words = operands(2048, 45)
    got = run(name, arch, APPROXIMATIONS[name][0], words, tmp_path)
    listing = subprocess.run([nvdisasm(), str(tmp_path / f"{name}.cubin")], check=True, capture_output=True,
                             text=True).stdout
    assert listing.count("MUFU.") == 1 and APPROXIMATIONS[name][1] in listing
    bad = approximation_faults(name, words, got)
    assert not bad, "\n".join(bad[:8])
    assert (got == simulator_words(name, words)).all()


def test_mufu_64h_negated_operand_and_sign_bit(tmp_path, needs_ptxas):
    """rcp.approx.ftz.f64 of -a: ptxas may fold the negation into the MUFU's operand (`-R`); either way the result
    is -rcp(a) (the sign bit of the high word flipped: PTX neg.f64 then rcp), but for a NaN, whose word is 0x7fffffff
    whatever its sign (the H100's, session 43)."""
    words = operands(2048, 46)
    got = run("rcp_neg", "sm_86", "neg.f64 %fd4, %fd1; rcp.approx.ftz.f64 %fd3, %fd4;", words, tmp_path)
    plain = run("rcp_plain", "sm_86", "rcp.approx.ftz.f64 %fd3, %fd1;", words, tmp_path)
    nan = (plain >> np.uint64(32)) == np.uint64(0x7FFFFFFF)     # a NaN is the one word 0x7fffffff either way (the H100's)
    assert nan.any() and (got[nan] == plain[nan]).all()
    assert ((got[~nan] ^ plain[~nan]) == np.uint64(1 << 63)).all()


def sm90_cases() -> dict:
    """name -> (PTX for sm_90, input words [4, n], the expected binary64 bits [n], or None for an approximation:
    f64_rcp_approx_ftz / f64_rsqrt_approx_ftz (approximation_faults(bound=False) then apply, and the GPU's words
    are recorded beside simulator_words') and f64_rsqrt_approx (rsqrt_approx_faults)), for
    tests/gpu/test_sim_probes_gpu.py (cubins by tests/gpu/prepare.sh; ptxas's only)."""
    out = {}
    for name in sorted(DEFINITIONS):
        words = operands(2048, 43)
        out[f"f64_{name}"] = (kernel(f"f64_{name}", "sm_90", DEFINITIONS[name][0]), words,
                              expected(name, words).view(np.uint64))
    for name, (body, _) in sorted(APPROXIMATIONS.items()):
        out[f"f64_{name}"] = (kernel(f"f64_{name}", "sm_90", body), operands(2048, 45), None)
    out["f64_rsqrt_approx"] = (kernel("f64_rsqrt_approx", "sm_90", "rsqrt.approx.f64 %fd3, %fd1;"), operands(2048, 44),
                               None)
    return out
