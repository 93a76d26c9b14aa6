"""The coppelius-gemm kernels executed by the simulator (bobc.sim.kernel.run_kernel, SIM's
one-kernel API) on both targets, against NumPy float64 of the binary16 inputs.
Tolerance: ref_gemm.error_bound (K
binary32 additions of exact products, the tensor cores truncating inside each step,
plus the epilogue's roundings).  The simulator's own HMMA accumulation order is its
business; any order meets the bound.
"""
from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np
import pytest

from bobc.sass.generate import gemm

REPO = Path(__file__).resolve().parents[2]
PREFIX = "coppelius-gemm"   # the model's name for its product kernels (examples/coppelius)
SOURCES = REPO / "examples" / "coppelius" / "Realization" / "Nvidia" / "SM86"


def _reference():
    path = REPO / "examples" / "coppelius" / "coppelius_model" / "ref_gemm.py"
    spec = importlib.util.spec_from_file_location("coppelius_ref_gemm", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


ref = _reference()


def run(layout, arch, buffers, **fields):
    """One launch in the simulator: pointers named by buffer (or (name, element offset))."""
    from bobc.sim.kernel import buffer_addresses, run_kernel
    addresses = buffer_addresses(buffers)
    for key in ("A", "B", "D", "Dh", "R", "bias", "E", "U"):
        named = fields.get(key)
        if named is None:
            fields[key] = 0
        else:
            name, offset = named if isinstance(named, tuple) else (named, 0)
            fields[key] = addresses[name] + offset * buffers[name].itemsize
    block = gemm.pack_parameters(**fields)
    variant = gemm.VARIANTS[layout]
    text = (SOURCES / f"{variant.identity(PREFIX)}.sass").read_text()
    return run_kernel(text, arch, grid=gemm.grid(fields["M"], fields["N"], fields.get("batches", 1)),
                      block=(gemm.THREADS, 1, 1), params=block, buffers=buffers,
                      shared_bytes=gemm.shared_bytes(variant))


def truth(layout, a, b, m, n, k, lda, ldb, alpha=1.0, bias=None, addend=None):
    A = (a.reshape(k, lda)[:, :m].T if layout == "tn" else a.reshape(m, lda)[:, :k]).astype(np.float64)
    B = (b.reshape(n, ldb)[:, :k].T if layout == "nt" else b.reshape(k, ldb)[:, :n]).astype(np.float64)
    alpha = float(np.float32(alpha))
    v = alpha * (A @ B)
    if bias is not None:
        v = v + bias[None, :]
    if addend is not None:
        v = v + addend
    return v, ref.error_bound(abs(alpha) * (np.abs(A) @ np.abs(B)), k, v)


CASES = [(layout, arch) for layout in sorted(gemm.VARIANTS) for arch in ("sm_86", "sm_90")]


@pytest.mark.parametrize("layout,arch", CASES, ids=[f"{l}.{a}" for l, a in CASES])
def test_product_of_two_by_two_tiles_over_six_k_steps(layout, arch):
    """M = N = 128 (2 x 2 blocks), K = 192 (six slices: the 4-stage ring wraps), padded strides."""
    rng = np.random.default_rng(11)
    m, n, k = 128, 128, 192
    a_rows, a_cols = (k, m + 8) if layout == "tn" else (m, k + 8)
    b_rows, b_cols = (n, k + 16) if layout == "nt" else (k, n + 16)
    a = rng.standard_normal(a_rows * a_cols).astype(np.float16)
    b = rng.standard_normal(b_rows * b_cols).astype(np.float16)
    buffers = {"a": a, "b": b, "d": np.full(m * n, np.nan, np.float32)}
    out = run(layout, arch, buffers, A="a", B="b", D="d", M=m, N=n, K=k, lda=a_cols, ldb=b_cols, ldd=n)
    v, bound = truth(layout, a, b, m, n, k, a_cols, b_cols)
    error = np.abs(out["d"].reshape(m, n).astype(np.float64) - v)
    assert (error <= bound).all(), np.argwhere(error > bound)[:5]


@pytest.mark.parametrize("layout,arch", CASES, ids=[f"{l}.{a}" for l, a in CASES])
def test_epilogue_flags_and_batches(layout, arch):
    """Two batches of one slice (K = 32); alpha, bias, R = D in place, the binary16 copy."""
    rng = np.random.default_rng(12)
    m, n, k, z = 64, 64, 32, 2
    lda = m if layout == "tn" else k
    ldb = k if layout == "nt" else n
    a = rng.standard_normal(z * m * k).astype(np.float16)
    b = rng.standard_normal(z * n * k).astype(np.float16)
    bias = rng.standard_normal(n).astype(np.float32)
    d0 = rng.standard_normal(z * m * n).astype(np.float32)
    buffers = {"a": a, "b": b, "d": d0.copy(), "h": np.zeros(z * m * n, np.float16), "bias": bias}
    out = run(layout, arch, buffers, A="a", B="b", D="d", R="d", Dh="h", bias="bias", M=m, N=n, K=k, lda=lda,
              ldb=ldb, ldd=n, ldh=n, sA=m * k, sB=n * k, sD=m * n, sH=m * n, alpha=0.5, flags=1 | 2 | 4, batches=z)
    for batch in range(z):
        v, bound = truth(layout, a[batch * m * k:(batch + 1) * m * k], b[batch * n * k:(batch + 1) * n * k],
                         m, n, k, lda, ldb, alpha=0.5, bias=bias,
                         addend=d0[batch * m * n:(batch + 1) * m * n].reshape(m, n))
        got = out["d"][batch * m * n:(batch + 1) * m * n].reshape(m, n)
        assert (np.abs(got.astype(np.float64) - v) <= bound).all()
        np.testing.assert_array_equal(out["h"][batch * m * n:(batch + 1) * m * n].reshape(m, n),
                                      got.astype(np.float16))


SPLITS = [(layout, arch, splits) for layout, arch in CASES for splits in (2, 3, 4)]


@pytest.mark.parametrize("layout,arch,splits", SPLITS, ids=[f"{l}.{a}.S{s}" for l, a, s in SPLITS])
def test_split_product(layout, arch, splits):
    """gemm.split_parameters: K = 192 in 2 or 3 splits, 256 in 4 (M = 64, N = 128: two tiles;
    padded strides) with every epilogue flag.  W holds each split's product over its own k range;
    D is bit for bit NumPy's binary32 ((W0 + W1) + W2) (+ W3), then alpha, bias, R, and within the
    product's bound of the float64 truth; the tickets are zero again.  The last block sums the
    partials two a round (gemm.staged_partials): 2 and 4 are whole rounds, 3 ends on a half one."""
    from bobc.sim.kernel import buffer_addresses, run_kernel
    rng = np.random.default_rng(13 + splits)
    m, n, k = 64, 128, 192 if splits < 4 else 256
    a_rows, a_cols = (k, m + 8) if layout == "tn" else (m, k + 8)
    b_rows, b_cols = (n, k + 16) if layout == "nt" else (k, n + 16)
    a = rng.standard_normal(a_rows * a_cols).astype(np.float16)
    b = rng.standard_normal(b_rows * b_cols).astype(np.float16)
    bias = rng.standard_normal(n).astype(np.float32)
    addend = rng.standard_normal(m * n).astype(np.float32)
    buffers = {"a": a, "b": b, "bias": bias, "r": addend, "d": np.full(m * n, np.nan, np.float32),
               "h": np.zeros(m * n, np.float16),
               "w": np.full(gemm.split_workspace_bytes(m, n, splits) // 4, np.nan, np.float32),
               "tickets": np.zeros(gemm.split_ticket_bytes(m, n) // 4, np.uint32)}
    at = buffer_addresses(buffers)
    grid, block = gemm.split_parameters(layout, splits, at["w"], at["tickets"], A=at["a"], B=at["b"], D=at["d"],
                                        Dh=at["h"], R=at["r"], bias=at["bias"], M=m, N=n, K=k, lda=a_cols,
                                        ldb=b_cols, ldd=n, ldh=n, alpha=0.5, flags=1 | 2 | 4)
    assert grid == (n // 64, m // 64, splits)
    variant = gemm.VARIANTS[layout]
    text = (SOURCES / f"{variant.identity(PREFIX)}.sass").read_text()
    out = run_kernel(text, arch, grid=grid, block=(gemm.THREADS, 1, 1), params=block, buffers=buffers,
                     shared_bytes=gemm.shared_bytes(variant))
    w = out["w"].reshape(splits, m, n)
    part = k // splits
    for s in range(splits):       # each partial is the product over its own k range
        a_part = (a.reshape(a_rows, a_cols)[s * part:(s + 1) * part] if layout == "tn"
                  else a.reshape(a_rows, a_cols)[:, s * part:(s + 1) * part])
        b_part = (b.reshape(b_rows, b_cols)[:, s * part:(s + 1) * part] if layout == "nt"
                  else b.reshape(b_rows, b_cols)[s * part:(s + 1) * part])
        v, bound = truth(layout, np.ascontiguousarray(a_part).ravel(), np.ascontiguousarray(b_part).ravel(),
                         m, n, part, a_part.shape[1], b_part.shape[1])
        assert (np.abs(w[s].astype(np.float64) - v) <= bound).all()
    total = np.zeros((m, n), np.float32)
    for s in range(splits):
        total = (total + w[s]).astype(np.float32)
    exact = (np.float32(0.5) * total).astype(np.float32)
    exact = ((exact + bias[None, :]).astype(np.float32) + addend.reshape(m, n)).astype(np.float32)
    np.testing.assert_array_equal(out["d"].reshape(m, n), exact)
    np.testing.assert_array_equal(out["h"].reshape(m, n), exact.astype(np.float16))
    v, bound = truth(layout, a, b, m, n, k, a_cols, b_cols, alpha=0.5, bias=bias, addend=addend.reshape(m, n))
    assert (np.abs(out["d"].reshape(m, n).astype(np.float64) - v) <= bound).all()
    assert (out["tickets"] == 0).all()


@pytest.mark.parametrize("layout,arch", CASES, ids=[f"{l}.{a}" for l, a in CASES])
def test_column_sums_of_b(layout, arch):
    """Flag 32 on M = 128, N = 128 (two row tiles: only the first sums), K = 192 (the ring
    wraps), padded strides, with R, bias and Dh: E is bit for bit ref_gemm.column_sums (the
    bias-backward kernel's association, which test_kernels_gemm writes out element by element)
    and within K 2^-24 sum|B| of the float64 sum; D and Dh are bit for bit the same as without
    the flag.  nt ignores the flag (E untouched)."""
    rng = np.random.default_rng(14)
    m, n, k = 128, 128, 192
    a_rows, a_cols = (k, m + 8) if layout == "tn" else (m, k + 8)
    b_rows, b_cols = (n, k + 16) if layout == "nt" else (k, n + 16)
    a = rng.standard_normal(a_rows * a_cols).astype(np.float16)
    b = (rng.standard_normal(b_rows * b_cols) * np.exp2(rng.integers(-10, 10, b_rows * b_cols))).astype(np.float16)
    bias = rng.standard_normal(n).astype(np.float32)
    addend = rng.standard_normal(m * n).astype(np.float32)
    outs = {}
    for flags in (1 | 2 | 4, 1 | 2 | 4 | 32):
        buffers = {"a": a, "b": b, "bias": bias, "r": addend, "d": np.full(m * n, np.nan, np.float32),
                   "h": np.zeros(m * n, np.float16), "e": np.full(n, np.nan, np.float32)}
        outs[flags] = run(layout, arch, buffers, A="a", B="b", D="d", Dh="h", R="r", bias="bias", E="e", M=m, N=n,
                          K=k, lda=a_cols, ldb=b_cols, ldd=n, ldh=n, alpha=0.5, flags=flags)
    plain, summed = outs[1 | 2 | 4], outs[1 | 2 | 4 | 32]
    np.testing.assert_array_equal(plain["d"].view(np.uint32), summed["d"].view(np.uint32))
    np.testing.assert_array_equal(plain["h"].view(np.uint16), summed["h"].view(np.uint16))
    assert np.isnan(plain["e"]).all()
    if layout == "nt":
        assert np.isnan(summed["e"]).all()
        return
    B = b.reshape(k, b_cols)[:, :n]
    np.testing.assert_array_equal(summed["e"].view(np.uint32), ref.column_sums(B).view(np.uint32))
    exact = B.astype(np.float64).sum(axis=0)
    assert (np.abs(summed["e"].astype(np.float64) - exact) <= k * 2.0 ** -24 * np.abs(B.astype(np.float64)).sum(axis=0)).all()


@pytest.mark.parametrize("arch", ["sm_86", "sm_90"])
def test_column_sums_are_the_bias_backward_kernels(arch):
    """The model's fusion: tn with flag 32 over a 256 x 192 output gradient dy (B, stored
    K x N as the weight-gradient product reads it) writes bit for bit what the
    coppelius-bias-backward kernel writes for dy, both run in the simulator."""
    from bobc.sim.kernel import Pointer, run_kernel
    rng = np.random.default_rng(15)
    k, n, m = 256, 192, 64
    dy = (rng.standard_normal((k, n)) * np.exp2(rng.integers(-8, 8, (k, n)))).astype(np.float16)
    x = rng.standard_normal((k, m)).astype(np.float16)
    summed = run("tn", arch, {"a": x.ravel(), "b": dy.ravel(), "d": np.zeros(m * n, np.float32),
                              "e": np.full(n, np.nan, np.float32)},
                 A="a", B="b", D="d", E="e", M=m, N=n, K=k, lda=m, ldb=n, ldd=n, flags=32)
    text = (SOURCES / "coppelius-bias-backward.sass").read_text()
    column = run_kernel(text, arch, grid=(n // 64,), block=(256,), params=[Pointer("dy"), Pointer("db"), np.uint32(k),
                                                                           np.uint32(n)],
                        buffers={"dy": dy, "db": np.full(n, np.nan, np.float32)})
    np.testing.assert_array_equal(summed["e"].view(np.uint32), column["db"].view(np.uint32))


def _separate_gelu(kernel, arch, buffers, words):
    """coppelius-gelu-forward or -backward run in the simulator over N = len of its output."""
    from bobc.sim.kernel import run_kernel
    text = (SOURCES / f"coppelius-{kernel}.sass").read_text()
    n = buffers["out"].size
    return run_kernel(text, arch, grid=(n // 1024,), block=(256,), params=words, buffers=buffers)["out"]


def _gelu_inputs(rng, m, n, k, layout):
    lda = m if layout == "tn" else k
    ldb = k if layout == "nt" else n
    a = rng.standard_normal(m * k).astype(np.float16)
    b = (rng.standard_normal(n * k) * 0.5).astype(np.float16)
    return a, b, lda, ldb


GELU_CASES = [(layout, arch, splits) for layout, arch in CASES for splits in (1, 2)]


@pytest.mark.parametrize("layout,arch,splits", GELU_CASES, ids=[f"{l}.{a}.S{s}" for l, a, s in GELU_CASES])
def test_gelu_is_the_separate_gelu_forward_kernel(layout, arch, splits):
    """Flag 64 with bias (M = 64, N = 128, K = 64, unsplit and in 2 splits): D is bit for bit
    the product without the flag (the pre-activation u), and Dh bit for bit what
    coppelius-gelu-forward writes for that D, both run in the simulator, and ref_gemm's
    binary32 emulation; u reaches past 8 on both sides (gelu's tails: s -> 0 and s -> 1)."""
    from bobc.sim.kernel import Pointer, buffer_addresses, run_kernel
    rng = np.random.default_rng(16)
    m, n, k = 64, 128, 64
    a, b, lda, ldb = _gelu_inputs(rng, m, n, k, layout)
    bias = (rng.standard_normal(n) * np.exp2(rng.integers(-4, 4, n))).astype(np.float32)
    outs = {}
    for flags in (2 | 4, 2 | 4 | 64):
        buffers = {"a": a, "b": b, "bias": bias, "d": np.full(m * n, np.nan, np.float32),
                   "h": np.zeros(m * n, np.float16),
                   "w": np.full(max(1, gemm.split_workspace_bytes(m, n, splits) // 4), np.nan, np.float32),
                   "tickets": np.zeros(gemm.split_ticket_bytes(m, n) // 4, np.uint32)}
        at = buffer_addresses(buffers)
        grid, block = gemm.split_parameters(layout, splits, at["w"], at["tickets"], A=at["a"], B=at["b"], D=at["d"],
                                            Dh=at["h"], bias=at["bias"], M=m, N=n, K=k, lda=lda, ldb=ldb, ldd=n,
                                            ldh=n, flags=flags)
        variant = gemm.VARIANTS[layout]
        outs[flags] = run_kernel((SOURCES / f"{variant.identity(PREFIX)}.sass").read_text(), arch, grid=grid,
                                 block=(gemm.THREADS, 1, 1), params=block, buffers=buffers,
                                 shared_bytes=gemm.shared_bytes(variant))
    plain, fused = outs[2 | 4], outs[2 | 4 | 64]
    u = fused["d"]
    np.testing.assert_array_equal(u.view(np.uint32), plain["d"].view(np.uint32))
    assert np.abs(u).max() > 8 and u.min() < -8
    g = _separate_gelu("gelu-forward", arch, {"u": u, "out": np.zeros(m * n, np.float16)},
                       [Pointer("u"), Pointer("out"), np.uint32(m * n), np.uint32(0)])
    np.testing.assert_array_equal(fused["h"].view(np.uint16), g.view(np.uint16))
    np.testing.assert_array_equal(fused["h"].view(np.uint16), ref.gelu_forward(u).view(np.uint16))


@pytest.mark.parametrize("layout,arch,splits", GELU_CASES, ids=[f"{l}.{a}.S{s}" for l, a, s in GELU_CASES])
def test_gelu_grad_is_the_separate_gelu_backward_kernel(layout, arch, splits):
    """Flag 128 with R, Dh, no D (M = 64, N = 128, K = 64, unsplit and in 2 splits; U laid out
    as D with a padded ldd): Dh is bit for bit what coppelius-gelu-backward writes for
    (u, dy = the product without the flag), both run in the simulator; with D written, D is
    dy gelu'(u) before rounding, and U is untouched."""
    from bobc.sim.kernel import Pointer, buffer_addresses, run_kernel
    rng = np.random.default_rng(17)
    m, n, k = 64, 128, 64
    ldd = n + 8
    a, b, lda, ldb = _gelu_inputs(rng, m, n, k, layout)
    addend = rng.standard_normal(m * ldd).astype(np.float32)
    u = (rng.standard_normal(m * ldd) * np.exp2(rng.integers(-3, 5, m * ldd))).astype(np.float32)
    outs = {}
    for flags in (1 | 4, 1 | 4 | 8 | 128, 1 | 4 | 128):
        buffers = {"a": a, "b": b, "r": addend, "u": u.copy(), "d": np.full(m * ldd, np.nan, np.float32),
                   "h": np.zeros(m * ldd, np.float16),
                   "w": np.full(max(1, gemm.split_workspace_bytes(m, n, splits) // 4), np.nan, np.float32),
                   "tickets": np.zeros(gemm.split_ticket_bytes(m, n) // 4, np.uint32)}
        at = buffer_addresses(buffers)
        grid, block = gemm.split_parameters(layout, splits, at["w"], at["tickets"], A=at["a"], B=at["b"], D=at["d"],
                                            Dh=at["h"], R=at["r"], U=at["u"], M=m, N=n, K=k, lda=lda, ldb=ldb,
                                            ldd=ldd, ldh=ldd, flags=flags)
        variant = gemm.VARIANTS[layout]
        outs[flags] = run_kernel((SOURCES / f"{variant.identity(PREFIX)}.sass").read_text(), arch, grid=grid,
                                 block=(gemm.THREADS, 1, 1), params=block, buffers=buffers,
                                 shared_bytes=gemm.shared_bytes(variant))
        np.testing.assert_array_equal(outs[flags]["u"].view(np.uint32), u.view(np.uint32))
    plain, fused, with_d = outs[1 | 4], outs[1 | 4 | 8 | 128], outs[1 | 4 | 128]
    dy = plain["d"].reshape(m, ldd)[:, :n].ravel()
    uu = u.reshape(m, ldd)[:, :n].ravel()
    du = _separate_gelu("gelu-backward", arch, {"u": uu, "dy": dy, "out": np.zeros(m * n, np.float16)},
                        [Pointer("u"), Pointer("dy"), Pointer("out"), np.uint32(m * n)])
    got = fused["h"].reshape(m, ldd)[:, :n].ravel()
    np.testing.assert_array_equal(got.view(np.uint16), du.view(np.uint16))
    assert np.isnan(fused["d"]).all()
    np.testing.assert_array_equal(with_d["h"].view(np.uint16), fused["h"].view(np.uint16))
    np.testing.assert_array_equal(with_d["d"].reshape(m, ldd)[:, :n].ravel().astype(np.float16).view(np.uint16),
                                  got.view(np.uint16))
    np.testing.assert_array_equal(got.view(np.uint16), ref.gelu_backward(uu, dy).view(np.uint16))


# ---- the 128-row tiling (gemm.generate(..., tile_m=128)): every element as the 64-row kernels compute it ----

TALL = 128


def _run_tiled(layout, arch, buffers, folder, tile_m, splits=1, warps=None, **fields):
    """One launch of the tile_m kernels of `warps` warps (the committed sources for the default
    64-row tiling, `folder`'s otherwise), pointers named by buffer, through split_parameters
    (a plain launch when splits is 1)."""
    from bobc.sim.kernel import buffer_addresses, run_kernel
    at = buffer_addresses(buffers)
    pointers = {key: at[name] for key, name in fields.pop("pointers").items()}
    grid, block = gemm.split_parameters(layout, splits, pointers.pop("W", 0), pointers.pop("tickets", 0),
                                        tile_m=tile_m, **pointers, **fields)
    variant = gemm.VARIANTS[layout]
    assert grid == (fields["N"] // 64, fields["M"] // tile_m, splits if splits > 1 else fields.get("batches", 1))
    committed = gemm.tiling(tile_m, warps) == gemm.tiling()
    text = ((SOURCES if committed else folder) / f"{variant.identity(PREFIX)}.sass").read_text()
    threads = gemm.tiling(tile_m, warps).threads
    return run_kernel(text, arch, grid=grid, block=(threads, 1, 1), params=block, buffers=buffers,
                      shared_bytes=gemm.shared_bytes(variant, tile_m))


def _tall_case(case, layout, rng):
    """(buffers, fields, splits) of one comparison: 'tiles' M = 256, N = 128 (2 x 2 tiles of
    128 x 64), K = 192 (the ring wraps), padded strides, alpha, bias, R, Dh and column sums;
    'batches' two batches of one slice (K = 32, M = 128, N = 64), R = D in place, flag 128 with U;
    'split' the first shape in 2 splits of K with bias, Dh and flag 64 (GELU after the partials' sum)."""
    m, n, k, z = (128, 64, 32, 2) if case == "batches" else (256, 128, 192, 1)
    a_rows, a_cols = (k, m + 8) if layout == "tn" else (m, k + 8)
    b_rows, b_cols = (n, k + 16) if layout == "nt" else (k, n + 16)
    a = rng.standard_normal(z * a_rows * a_cols).astype(np.float16)
    b = (rng.standard_normal(z * b_rows * b_cols) * np.exp2(rng.integers(-6, 6, z * b_rows * b_cols))
         ).astype(np.float16)
    ldd = n + 8
    buffers = {"a": a, "b": b, "bias": rng.standard_normal(n).astype(np.float32),
               "d": rng.standard_normal(z * m * ldd).astype(np.float32), "h": np.full(z * m * ldd, np.nan, np.float16),
               "e": np.full(n, np.nan, np.float32),
               "u": (rng.standard_normal(z * m * ldd) * 4).astype(np.float32)}
    fields = dict(M=m, N=n, K=k, lda=a_cols, ldb=b_cols, ldd=ldd, ldh=ldd, alpha=0.5,
                  pointers=dict(A="a", B="b", D="d", Dh="h", bias="bias", R="d", E="e", U="u"))
    splits = 1
    if case == "tiles":
        fields["flags"] = 1 | 2 | 4 | (32 if gemm.VARIANTS[layout].column_sums else 0)
    elif case == "batches":
        fields.update(flags=1 | 2 | 4 | 128, batches=z, sA=a_rows * a_cols, sB=b_rows * b_cols, sD=m * ldd,
                      sH=m * ldd)
    else:
        splits = 2
        buffers["w"] = np.full(gemm.split_workspace_bytes(m, n, splits) // 4, np.nan, np.float32)
        fields["flags"] = 2 | 4 | 64
        del fields["pointers"]["R"], fields["pointers"]["E"]
    return buffers, fields, splits


TALL_CASES = [(layout, arch, case) for layout, arch in CASES for case in ("tiles", "batches", "split")]


@pytest.mark.parametrize("layout,arch,case", TALL_CASES, ids=[f"{l}.{a}.{c}" for l, a, c in TALL_CASES])
def test_128_row_tiles_compute_what_64_row_tiles_do(layout, arch, case, tall_sources):
    """D, Dh and E of the tile_m = 128 kernels are bit for bit the 64-row kernels' on the same
    inputs (each warp of a 128 x 64 tile runs a 64-row tile's warp's instructions in its order;
    split K splits K the same way), and the 64-row results are whole: D and Dh written
    everywhere the launch covers, E (nn, tn with flag 32) within its bound of the float64 sum,
    the split's tickets zero again."""
    outs = {}
    for tile_m in (64, TALL):
        buffers, fields, splits = _tall_case(case, layout, np.random.default_rng(21))
        if splits > 1:
            buffers["tickets"] = np.zeros(gemm.split_ticket_bytes(fields["M"], fields["N"], tile_m) // 4, np.uint32)
            fields["pointers"].update(W="w", tickets="tickets")
        outs[tile_m] = _run_tiled(layout, arch, buffers, tall_sources, tile_m, splits, **fields)
        if splits > 1:
            assert (outs[tile_m]["tickets"] == 0).all()
    base, tall = outs[64], outs[TALL]
    for name in ("d", "h", "e"):
        np.testing.assert_array_equal(tall[name].view(np.uint8), base[name].view(np.uint8), err_msg=name)
    m, n = (128, 64) if case == "batches" else (256, 128)
    z, ldd = (2 if case == "batches" else 1), n + 8
    before, _, _ = _tall_case(case, layout, np.random.default_rng(21))
    halves = base["h"].reshape(z, m, ldd)
    assert np.isfinite(halves[:, :, :n]).all() and np.isnan(halves[:, :, n:]).all()
    assert not np.array_equal(base["d"].reshape(z, m, ldd)[:, :, :n], before["d"].reshape(z, m, ldd)[:, :, :n])
    np.testing.assert_array_equal(base["d"].reshape(z, m, ldd)[:, :, n:], before["d"].reshape(z, m, ldd)[:, :, n:])
    if case == "tiles" and gemm.VARIANTS[layout].column_sums:
        k, b_cols = 192, n + 16
        B = before["b"].reshape(k, b_cols)[:, :n].astype(np.float64)
        assert (np.abs(base["e"] - B.sum(axis=0)) <= k * 2.0 ** -24 * np.abs(B).sum(axis=0)).all()
    else:
        assert np.isnan(base["e"]).all()


# ---- eight warps on a 64 x 64 tile (gemm.generate(..., warps=8)): warps of 32 x 16, same results ----


@pytest.mark.parametrize("layout,arch,case", TALL_CASES, ids=[f"{l}.{a}.{c}" for l, a, c in TALL_CASES])
def test_eight_warp_tiles_compute_what_four_warp_tiles_do(layout, arch, case, eight_warp_sources):
    """D, Dh and E of the 8-warp 64-row kernels (256 threads, warps of 32 x 16) are bit for bit
    the committed 4-warp kernels' on the same inputs: every element is the same HMMAs over the
    same k order in the same accumulator, the column sums the same association over 256 threads,
    split K the same partials added in split order (tickets zero again).  D and Dh are checked
    whole (written where the launch covers, untouched past N) so that agreement is not two
    kernels leaving the same holes; E against the float64 column sums."""
    outs = {}
    for warps in (4, 8):
        buffers, fields, splits = _tall_case(case, layout, np.random.default_rng(23))
        if splits > 1:
            buffers["tickets"] = np.zeros(gemm.split_ticket_bytes(fields["M"], fields["N"]) // 4, np.uint32)
            fields["pointers"].update(W="w", tickets="tickets")
        outs[warps] = _run_tiled(layout, arch, buffers, eight_warp_sources, 64, splits, warps=warps, **fields)
        if splits > 1:
            assert (outs[warps]["tickets"] == 0).all()
    base, eight = outs[4], outs[8]
    for name in ("d", "h", "e"):
        np.testing.assert_array_equal(eight[name].view(np.uint8), base[name].view(np.uint8), err_msg=name)
    m, n = (128, 64) if case == "batches" else (256, 128)
    z, ldd = (2 if case == "batches" else 1), n + 8
    before, _, _ = _tall_case(case, layout, np.random.default_rng(23))
    halves = eight["h"].reshape(z, m, ldd)
    assert np.isfinite(halves[:, :, :n]).all() and np.isnan(halves[:, :, n:]).all()
    d = eight["d"].reshape(z, m, ldd)
    assert (d[:, :, :n] != before["d"].reshape(z, m, ldd)[:, :, :n]).mean() > 0.99
    np.testing.assert_array_equal(d[:, :, n:], before["d"].reshape(z, m, ldd)[:, :, n:])
    if case == "tiles" and gemm.VARIANTS[layout].column_sums:
        k, b_cols = 192, n + 16
        B = before["b"].reshape(k, b_cols)[:, :n].astype(np.float64)
        assert (np.abs(eight["e"] - B.sum(axis=0)) <= k * 2.0 ** -24 * np.abs(B).sum(axis=0)).all()
    else:
        assert np.isnan(eight["e"]).all()
