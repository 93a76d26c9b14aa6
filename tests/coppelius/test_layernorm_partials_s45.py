"""Split products whose next reader is a layer norm (session 45): the product stores its partials
and exits (bobc.sass.generate.gemm flag 512, partials only), and coppelius-layernorm-forward /
-backward add them as the product's last split block would, run its epilogue and write its D.

Oracles: NumPy's binary32 arithmetic (IEEE round to nearest, as FADD and FMUL without .FTZ):
v = ((+0 + W[0]) + W[1]) + .. , then v alpha, + bias, + R, each rounded -- the order gemm.py's
docstring states for split K (and tests/coppelius/test_kernels_gemm_sim.py holds the product to);
and the end to end check: the plain split product's D (flag 16 with its epilogue) against the
partials-only product followed by the norm, bit for bit, on both targets.
"""
from __future__ import annotations

import numpy as np
import pytest

from bobc.sass.generate import gemm

from .test_kernels_gemm_sim import PREFIX, SOURCES
from .test_kernels_ops_sim import ARCHS, run

EPS = np.float32(1e-5)


def _awkward(rng, shape, scale=1.0):
    """Values with the cases a sum's bits depend on: -0, subnormals, exact cancellations."""
    v = (rng.standard_normal(shape) * scale).astype(np.float32)
    flat = v.reshape(-1)
    flat[::97] = -0.0
    flat[5::89] = np.float32(1e-40)
    flat[7::83] = -np.float32(3e-39)
    return v


def _sum(w, alpha):
    """+0 + W[0] + .. + W[S-1], then alpha: binary32 at every step."""
    v = np.zeros(w.shape[1:], np.float32)
    for s in range(w.shape[0]):
        v = (v + w[s]).astype(np.float32)
    return (v * np.float32(alpha)).astype(np.float32)


def _forward(arch, R, C, x, gain, bias, partials=None):
    words = [np.uint64(0), np.uint64(0), np.uint64(0), np.uint32(0), np.float32(0)]
    buffers = {"x": x, "g": gain, "b": bias, "y": np.zeros((R, C), np.float16),
               "mean": np.zeros(R, np.float32), "rstd": np.zeros(R, np.float32)}
    if partials is not None:
        from bobc.sim.kernel import Pointer
        w, rp, bp, alpha = partials
        buffers.update(w=w, rp=rp, bp=bp)
        words = [Pointer("w"), Pointer("rp"), Pointer("bp"), np.uint32(w.shape[0]), np.float32(alpha)]
    from bobc.sim.kernel import Pointer
    return run("layernorm-forward", arch, (R // 8,), (256,),
               [Pointer("x"), Pointer("g"), Pointer("b"), Pointer("y"), Pointer("mean"), Pointer("rstd"),
                np.uint32(R), np.uint32(C), EPS, np.float32(1.0 / C), *words], buffers)


@pytest.mark.parametrize("arch", ARCHS)
@pytest.mark.parametrize("C,S", [(256, 2), (768, 4), (384, 3)])
def test_forward_adds_the_partials_as_the_product_and_normalizes_them(arch, C, S):
    """x = ((+0 + W0) + ..) alpha + bp + Rp, written to word 0, bit for bit NumPy's binary32; y,
    mean, rstd bit for bit the kernel's own on that x read plainly (S = 0).  C = 384 leaves chunks
    3..5 absent (x stays within the row's C)."""
    rng = np.random.default_rng(4500 + C + S)
    R = 16
    w = _awkward(rng, (S, R, C))
    rp, bp = _awkward(rng, (R, C), 2.0), _awkward(rng, C, 0.1)
    gain, bias = (rng.standard_normal(C) * 0.1).astype(np.float32), (rng.standard_normal(C) * 0.1).astype(np.float32)
    alpha = 0.5 if S == 3 else 1.0
    x = ((_sum(w, alpha) + bp[None, :]).astype(np.float32) + rp).astype(np.float32)
    out = _forward(arch, R, C, np.full((R, C), np.nan, np.float32), gain, bias, (w, rp, bp, alpha))
    np.testing.assert_array_equal(out["x"].view(np.uint32), x.view(np.uint32))
    plain = _forward(arch, R, C, x.copy(), gain, bias)
    for name in ("y", "mean", "rstd"):
        np.testing.assert_array_equal(out[name].view(np.uint8), plain[name].view(np.uint8))


def _backward(arch, R, C, x, gain, mean, rstd, dy, partials=None):
    from bobc.sim.kernel import Pointer
    words = [np.uint64(0), np.uint32(0), np.float32(0)]
    buffers = {"x": x, "g": gain, "mean": mean, "rstd": rstd, "dy": dy,
               "dx": np.full((R, C), np.nan, np.float32), "dxh": np.zeros((R, C), np.float16)}
    if partials is not None:
        w, alpha = partials
        buffers["w"] = w
        words = [Pointer("w"), np.uint32(w.shape[0]), np.float32(alpha)]
    return run("layernorm-backward", arch, (R // 8,), (256,),
               [Pointer("x"), Pointer("g"), Pointer("mean"), Pointer("rstd"), Pointer("dy"), Pointer("dx"),
                Pointer("dx"), Pointer("dxh"), np.uint32(R), np.uint32(C), np.float32(1.0 / C), np.uint32(0),
                *words], buffers)


@pytest.mark.parametrize("arch", ARCHS)
@pytest.mark.parametrize("C,S", [(256, 2), (768, 4), (384, 3)])
def test_backward_adds_the_partials_as_the_product_and_differentiates(arch, C, S):
    """dy = ((+0 + W0) + ..) alpha, written to word 4, bit for bit NumPy's binary32; dx and its
    binary16 copy bit for bit the kernel's own with that dy read plainly (S = 0)."""
    rng = np.random.default_rng(4600 + C + S)
    R = 16
    w = _awkward(rng, (S, R, C))
    x = (rng.standard_normal((R, C)) * 2).astype(np.float32)
    gain = (rng.standard_normal(C) * 0.1).astype(np.float32)
    mean = x.mean(axis=1).astype(np.float32)
    rstd = (1 / np.sqrt(x.var(axis=1) + 1e-5)).astype(np.float32)
    alpha = 0.5 if S == 3 else 1.0
    dy = _sum(w, alpha)
    out = _backward(arch, R, C, x, gain, mean, rstd, np.full((R, C), np.nan, np.float32), (w, alpha))
    np.testing.assert_array_equal(out["dy"].view(np.uint32), dy.view(np.uint32))
    plain = _backward(arch, R, C, x, gain, mean, rstd, dy.copy())
    for name in ("dx", "dxh"):
        np.testing.assert_array_equal(out[name].view(np.uint8), plain[name].view(np.uint8))


def _product(layout, arch, splits, flags, source, shared, maps=False):
    """A split product T x C = 64 x 256 over K = 192 (2, 3 splits) or 256 (4) with `flags`."""
    from bobc.sim.kernel import buffer_addresses, run_kernel
    rng = np.random.default_rng(4700 + splits)
    m, n, k = 64, 256, 192 if splits < 4 else 256
    a_cols = k
    b_rows, b_cols = (n, k) if layout == "nt" else (k, n)
    buffers = {"a": rng.standard_normal(m * k).astype(np.float16),
               "b": rng.standard_normal(b_rows * b_cols).astype(np.float16),
               "bias": _awkward(rng, n, 0.1), "r": _awkward(rng, m * n, 2.0),
               "d": np.full(m * n, np.nan, np.float32), "maps": np.zeros(256, np.uint8),
               "w": np.full(gemm.split_workspace_bytes(m, n, splits) // 4, np.nan, np.float32),
               "tickets": np.zeros(gemm.split_ticket_bytes(m, n) // 4, np.uint32)}
    at = buffer_addresses(buffers)
    grid, block = gemm.split_parameters(layout, splits, at["w"], at["tickets"], A=at["a"], B=at["b"], D=at["d"],
                                        R=at["r"], bias=at["bias"], M=m, N=n, K=k, lda=a_cols, ldb=b_cols,
                                        ldd=n, flags=flags)
    if maps:
        from .test_kernels_gemm_sm90_sim import with_tensor_maps
        block = with_tensor_maps(layout, block, buffers)
    out = run_kernel(source, arch, grid=grid, block=(gemm.THREADS, 1, 1), params=block, buffers=buffers,
                     shared_bytes=shared)
    return out, buffers


KERNELS = [("nn", "sm_86", False), ("nt", "sm_86", False), ("nn", "sm_90", False), ("nn", "sm_90", True),
           ("nt", "sm_90", True)]


@pytest.mark.parametrize("layout,arch,own", KERNELS, ids=[f"{l}.{a}{'.own' if o else ''}" for l, a, o in KERNELS])
@pytest.mark.parametrize("splits", [2, 4])
def test_partials_only_then_the_norm_is_the_product_bit_for_bit(layout, arch, own, splits):
    """The product with flags 1 | 2 (R, bias) split S ways as main runs it, against the same
    product with flag 512 followed by coppelius-layernorm-forward over its partials: the norm's x
    is the first's D bit for bit; the partials-only launch writes W (the same bytes) and nothing
    else (D untouched, tickets zero).  `own`: sm_90's TMA + warpgroup kernels."""
    from bobc.sass.generate import gemm_sm90
    variant = gemm.VARIANTS[layout]
    name = f"{variant.identity(PREFIX)}{'.sm_90' if own else ''}.sass"
    source = (SOURCES / name).read_text()
    shared = gemm_sm90.shared_bytes() if own else gemm.shared_bytes(variant)
    whole, _ = _product(layout, arch, splits, 1 | 2, source, shared, own)
    only, buffers = _product(layout, arch, splits, gemm.FLAG_PARTIALS, source, shared, own)
    assert np.isnan(only["d"]).all() and (only["tickets"] == 0).all()
    np.testing.assert_array_equal(only["w"].view(np.uint32), whole["w"].view(np.uint32))
    m, n = 64, 256
    rng = np.random.default_rng(1)
    gain, bias = (rng.standard_normal(n) * 0.1).astype(np.float32), (rng.standard_normal(n) * 0.1).astype(np.float32)
    norm = _forward(arch, m, n, np.full((m, n), np.nan, np.float32), gain, bias,
                    (only["w"].reshape(splits, m, n), buffers["r"].reshape(m, n), buffers["bias"], 1.0))
    np.testing.assert_array_equal(norm["x"].reshape(-1).view(np.uint32), whole["d"].view(np.uint32))


def test_partials_only_is_refused_without_split_k():
    """Flag 512 alone, or with column sums or the Adam step, names the flag."""
    fields = dict(A=0, B=0, D=0, M=64, N=64, K=32, lda=32, ldb=64, ldd=64)
    for flags in (gemm.FLAG_PARTIALS, gemm.FLAG_PARTIALS | gemm.FLAG_SPLIT | gemm.FLAG_COLUMN_SUMS):
        with pytest.raises(ValueError, match="partials only"):
            gemm.pack_parameters(flags=flags, batches=2, **fields)
