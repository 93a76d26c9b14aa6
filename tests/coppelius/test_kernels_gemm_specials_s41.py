"""NaN, infinity, -0, binary16 subnormals and overflow through the product kernels' tensor-core
sums, in the simulator: the HMMA kernel (coppelius-gemm-nn.sass, on sm_86 and sm_90) and sm_90's
warpgroup kernel (coppelius-gemm-nn.sm_90.sass: TMA + HGMMA), one 64 x 64 x 64 tile with bias, R
and the binary16 copy Dh (flags 1 | 2 | 4: D = P + bias + R, Dh = binary16(D)).

The oracle is the PTX ISA, not the simulator.  mma and wgmma.mma_async ("Precision and rounding"):
D = A * B + C, products "with at least single precision", f32 accumulation "with at least single
precision", and "the accumulation order, rounding and handling of subnormal inputs are unspecified".
So what is FIXED, computed here from the binary16 inputs with Python integers (every binary16 value
times 2**24 is an integer) and IEEE float64 for the special classes:
- a NaN operand anywhere in A's row or B's column, an inf * 0 product, or infinite products of both
  signs give a NaN (IEEE 754 invalid operations; every order of the sum gives one);
- otherwise an infinite product gives that infinity;
- a sum whose products are all multiples of 2**e and add, in magnitude, to below 2**(e + 24), is
  exact in every order and with any rounding of at least single precision (every partial sum is a
  binary32 value) -- then the epilogue's binary32 adds (bias, R) and cvt.rn.f16.f32 (Dh) are IEEE's
  round to nearest even, an overflow infinity (bias + R = 6e38; D > 65504 in Dh);
- a zero result is zero, its sign open.
Left OPEN, and written by tests/gpu/test_gemm_specials_gpu_s41.py beside the GPU's words: a NaN's bits
(the simulator's documented rule: the canonical NaN, 0x7fffffff / 0x7fff, which the epilogue's FADD
writes on the GPU too), the sign of a zero, a sum with a binary16 subnormal operand (the simulator
keeps subnormals: its guess, docs/simulator.md), and a sum whose products span more exponents than
binary64 holds (the simulator's binary64 sum drops 2**-48 beside 65504**2; exact would keep it).

The kernels' accumulators start at +0, so a sum of -0 products comes out +0 by IEEE (+0 + -0) whatever
the tensor core does with the products' signs: -0 accumulation is not observable through these kernels
(tests/sass/test_sim_probe_s41_nanprobes2.py's mma kernel takes a -0 C).  Nor can the MMA's own binary32
accumulator overflow here: 64 binary16 products are below 64 * 65504**2 < 2**39.
"""
from __future__ import annotations

import functools
import warnings

import numpy as np
import pytest

from bobc.sass.generate import gemm, gemm_sm90

from .test_kernels_gemm_sm90_sim import _run
from .test_kernels_gemm_sim import PREFIX, SOURCES

M = N = K = 64
LAYOUT = "nn"
FLAGS = gemm.FLAG_ADD_R | gemm.FLAG_BIAS | gemm.FLAG_HALF

# what each probed row of A holds (the log's labels)
ROWS = {
    0: "A has qNaN 0x7e00", 1: "A has sNaN 0x7c01", 2: "A has -qNaN 0xfe00", 3: "A has -NaN 0xfd55",
    4: "A has +inf at k 9 (B[9]: 0 in n 0..7, 2 in 8..15, -1 in 16..23)", 5: "A has +inf and -inf (n 24..27: both meet 1)",
    6: "A all -0, R -0", 7: "A has binary16 subnormals 0x0001, 0x03ff", 8: "A 1 meets B subnormals (n 48..63)",
    9: "A 65504 x 4 meets B 65504 (n 60..63)", 10: "R 3e38 (n 62, 63 with bias 3e38: overflow)",
    11: "65504^2 + 2^-48 - 65504^2 (k 0, 1, 2; n 0)", 12: "the same at k 0, 5, 8", 13: "the same at k 0, 1, 4",
}
COLUMNS = {40: "B has qNaN 0x7e00", 41: "B has NaN 0xffff"}


def _half(bits: int) -> np.float16:
    return np.uint16(bits).view(np.float16)


@functools.lru_cache(maxsize=None)
def operands() -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """A [M, K], B [K, N] binary16; bias [N], R [M, N] binary32: small integers, specials per ROWS."""
    rng = np.random.default_rng(41)
    a = rng.integers(-2, 3, (M, K)).astype(np.float16)
    b = rng.integers(-2, 3, (K, N)).astype(np.float16)
    a[0, 3], a[1, 5], a[2, 7], a[3, 9] = _half(0x7E00), _half(0x7C01), _half(0xFE00), _half(0xFD55)
    a[4, :] = 1
    a[4, 9] = np.inf
    b[9, :8], b[9, 8:16], b[9, 16:24] = 0, 2, -1
    a[5, 10], a[5, 11] = np.inf, -np.inf
    b[10, 24:28] = b[11, 24:28] = 1
    b[13, 40], b[14, 41] = _half(0x7E00), _half(0xFFFF)
    a[6, :] = -0.0
    a[7, :] = 0
    a[7, 0], a[7, 1] = _half(0x0001), _half(0x03FF)
    a[8, :] = 0
    a[8, 2] = 1
    b[2, 48:56], b[2, 56:] = _half(0x8200), _half(0x0001)
    a[9, :] = 0
    a[9, 0:4] = 65504
    b[0:4, 60:] = 65504
    a[11:14, :] = 0
    b[:, 0] = 0
    for row, (p, q, r) in zip((11, 12, 13), ((0, 1, 2), (0, 5, 8), (0, 1, 4))):
        a[row, p], a[row, q], a[row, r] = 65504, _half(0x0001), -65504
        b[p, 0], b[q, 0], b[r, 0] = 65504, _half(0x0001), 65504
    bias = np.zeros(N, np.float32)
    bias[62:] = 3e38
    r = np.zeros((M, N), np.float32)
    r[6, :] = -0.0
    r[10, 62:] = 3e38
    return a, b, bias, r


@functools.lru_cache(maxsize=None)
def fixed() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(D, Dh as float64 with NaN for "a NaN", FIXED mask [M, N]) from the PTX ISA's rules above."""
    a, b, bias, r = operands()
    a64, b64 = a.astype(np.float64), b.astype(np.float64)
    with np.errstate(all="ignore"):
        special = a64 @ b64                                   # IEEE classes: NaN, +-inf, finite
    finite = np.isfinite(special)
    value = np.full((M, N), np.nan)
    ok = np.zeros((M, N), bool)
    subnormal_a = (a64 != 0) & (np.abs(a64) < 2.0 ** -14)
    subnormal_b = (b64 != 0) & (np.abs(b64) < 2.0 ** -14)
    for i in range(M):
        for j in range(N):
            if not finite[i, j]:
                ok[i, j] = not (np.isinf(special[i, j]) and ((subnormal_a[i] & (b64[:, j] != 0)) |
                                                          (subnormal_b[:, j] & (a64[i] != 0))).any())
                value[i, j] = special[i, j]
                continue
            if ((subnormal_a[i] & (b64[:, j] != 0)) | (subnormal_b[:, j] & (a64[i] != 0))).any():
                continue                                       # PTX: subnormal inputs' handling unspecified
            # exact sums: binary16 * 2**24 is an integer, so a product * 2**48 is one
            products = [int(x * 2.0 ** 24) * int(y * 2.0 ** 24) for x, y in zip(a64[i], b64[:, j])]
            nonzero = [p for p in products if p]
            if nonzero:
                unit = min(p & -p for p in (abs(q) for q in nonzero))
                if sum(abs(p) for p in nonzero) >= unit << 24:
                    continue                                   # some order or rounding may round
            value[i, j] = sum(products) / 2.0 ** 48
            ok[i, j] = True
    with np.errstate(all="ignore"):
        d = (value.astype(np.float32) + bias[None, :]) + r     # binary32 adds, round to nearest even
        h = d.astype(np.float16)                               # cvt.rn.f16.f32: overflow -> inf
    return d.astype(np.float64), h.astype(np.float64), ok


def check(d_bits: np.ndarray, h_bits: np.ndarray) -> list[str]:
    """Where the stored D (binary32 words) and Dh (binary16 words) break what the PTX ISA fixes."""
    want_d, want_h, ok = fixed()
    got_d = np.asarray(d_bits, np.uint32).reshape(M, N).view(np.float32).astype(np.float64)
    got_h = np.asarray(h_bits, np.uint16).reshape(M, N).view(np.float16).astype(np.float64)
    bad = []
    for name, got, want in (("D", got_d, want_d), ("Dh", got_h, want_h)):
        for i, j in zip(*np.nonzero(ok)):
            w, g = want[i, j], got[i, j]
            if (np.isnan(w) and not np.isnan(g)) or (not np.isnan(w) and g != w):
                bad.append(f"{name}[{i}, {j}] = {g!r}, the PTX ISA fixes {w!r} ({ROWS.get(i, COLUMNS.get(j, 'small integers'))})")
    return bad[:40]


def open_words(d_bits, h_bits, sim_d, sim_h) -> list[str]:
    """The words the PTX ISA leaves open, the stored ones beside the simulator's: each probed row's
    first distinct (D, Dh) words, a NaN's bits, a zero's sign."""
    d, h = np.asarray(d_bits, np.uint32).reshape(M, N), np.asarray(h_bits, np.uint16).reshape(M, N)
    sd, sh = np.asarray(sim_d, np.uint32).reshape(M, N), np.asarray(sim_h, np.uint16).reshape(M, N)
    lines = []
    for i, what in ROWS.items():
        columns = sorted({0, 8, 16, 24, 40, 41, 48, 56, 60, 62})
        words = " ".join(f"n{j}:{d[i, j]:08x}/{h[i, j]:04x}" + ("" if (d[i, j], h[i, j]) == (sd[i, j], sh[i, j])
                                                                 else f"(sim {sd[i, j]:08x}/{sh[i, j]:04x})")
                         for j in columns)
        lines.append(f"row {i:2} {what}: {words}")
    for j, what in COLUMNS.items():
        lines.append(f"column {j} {what}: D words {sorted({f'{x:08x}' for x in d[:, j]})}, "
                     f"simulator's {sorted({f'{x:08x}' for x in sd[:, j]})}")
    differ = int(((d != sd) | (h != sh)).sum())
    lines.append(f"elements whose D or Dh words differ from the simulator's: {differ} of {M * N}")
    return lines


def nan_rule_breaks(d_bits, h_bits, sim_d, sim_h) -> list[str]:
    """Where a NaN the GPU stored is not the simulator's word: its documented rule (docs/simulator.md,
    "NaN, infinity, -0 and subnormal results": the canonical NaN of the format, which the epilogue's
    binary32 adds write on the GPU whatever NaN the tensor core gave them)."""
    d, h = np.asarray(d_bits, np.uint32).reshape(M, N), np.asarray(h_bits, np.uint16).reshape(M, N)
    sd, sh = np.asarray(sim_d, np.uint32).reshape(M, N), np.asarray(sim_h, np.uint16).reshape(M, N)
    nan_d = np.isnan(sd.view(np.float32)) | np.isnan(d.view(np.float32))
    nan_h = np.isnan(sh.view(np.float16)) | np.isnan(h.view(np.float16))
    return ([f"D[{i}, {j}] {d[i, j]:08x}, simulator {sd[i, j]:08x}" for i, j in zip(*np.nonzero(nan_d & (d != sd)))][:20]
            + [f"Dh[{i}, {j}] {h[i, j]:04x}, simulator {sh[i, j]:04x}" for i, j in zip(*np.nonzero(nan_h & (h != sh)))][:20])


@functools.lru_cache(maxsize=None)
def simulate(kind: str, arch: str) -> tuple[np.ndarray, np.ndarray]:
    """The simulator's D and Dh words of kernel `kind` ("hmma", "hgmma") on `arch` for operands()."""
    from bobc.sim.kernel import buffer_addresses, run_kernel
    a, b, bias, r = operands()
    variant = gemm.VARIANTS[LAYOUT]
    if kind == "hmma":
        source, shared, words = SOURCES / f"{variant.identity(PREFIX)}.sass", gemm.shared_bytes(variant), None
    else:
        source, shared, words = SOURCES / f"{variant.identity(PREFIX)}.sm_90.sass", gemm_sm90.shared_bytes(), "maps"
    buffers = {"a": a.reshape(-1).copy(), "b": b.reshape(-1).copy(), "bias": bias.copy(), "r": r.reshape(-1).copy(),
               "d": np.full(M * N, np.nan, np.float32), "h": np.zeros(M * N, np.float16), "maps": np.zeros(256, np.uint8)}
    fields = dict(A="a", B="b", D="d", Dh="h", R="r", bias="bias", M=M, N=N, K=K, lda=K, ldb=N, ldd=N, ldh=N,
                  flags=FLAGS)
    if arch == "sm_90":
        out = _run(LAYOUT, source, buffers, shared, words, **fields)
    else:
        addresses = buffer_addresses(buffers)
        for key in ("A", "B", "D", "Dh", "R", "bias"):
            fields[key] = addresses[fields[key]]
        out = run_kernel(source.read_text(), arch, grid=gemm.grid(M, N), block=(gemm.THREADS, 1, 1),
                         params=gemm.pack_parameters(**fields), buffers=buffers, shared_bytes=shared)
    return out["d"].view(np.uint32).copy(), out["h"].view(np.uint16).copy()


RUNS = [("hmma", "sm_86"), ("hmma", "sm_90"), ("hgmma", "sm_90")]


def test_the_oracle_fixes_the_probed_classes():
    """The oracle itself: every class the rows probe is there (so a check() that passes says something)."""
    d, h, ok = fixed()
    assert ok[0:6, :48].all() and np.isnan(d[0:4]).all() and np.isnan(d[:, 40:42]).all()
    assert np.isnan(d[4, :8]).all() and (d[4, 8:16] == np.inf).all() and (d[4, 16:24] == -np.inf).all()
    assert np.isnan(d[5, 24:28]).all()
    assert (d[10, 62:] == np.inf).all() and ok[10, 62:].all()              # bias + R overflow binary32
    assert ok[9, 60] and d[9, 60] == 4 * 65504.0 ** 2 and h[9, 60] == np.inf   # Dh overflows binary16
    b = operands()[1]
    meets = (b[0] != 0) | (b[1] != 0)                 # row 7's subnormals meet a nonzero B
    assert meets[:40].sum() > 20 and not ok[7, :40][meets[:40]].any()
    assert not ok[8, 48:60].any() and not ok[11:14, 0].any()
    assert ok.sum() > M * N * 3 // 4                 # open: the subnormal columns 48..59, row 7, rows 11..13


@pytest.mark.parametrize("kind,arch", RUNS, ids=[f"{k}.{a}" for k, a in RUNS])
def test_simulated_kernel_stores_what_ptx_fixes(kind, arch):
    d, h = simulate(kind, arch)
    bad = check(d, h)
    assert not bad, "\n".join(bad)


def test_hgmma_kernel_is_the_hmma_kernel_bit_for_bit_on_specials():
    """Both kernels' MMAs sum a k16 step in binary64 and round once (docs/simulator.md), so the
    simulator gives the same words, NaNs, zeros' signs and subnormal sums included."""
    (hd, hh), (gd, gh) = simulate("hmma", "sm_90"), simulate("hgmma", "sm_90")
    np.testing.assert_array_equal(gd, hd)
    np.testing.assert_array_equal(gh, hh)


def test_nan_operands_give_no_numpy_warning():
    """A NaN or infinite binary16 operand is data, not a fault of the simulator: neither MMA prints
    NumPy's "invalid value encountered" RuntimeWarning (HGMMA's matmul did, outside np.errstate)."""
    simulate.cache_clear()
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        for kind, arch in RUNS:
            simulate(kind, arch)
