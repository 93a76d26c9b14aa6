"""The product kernels in 128-row tiles (gemm.generate(..., tile_m=128)) and in 64-row tiles of
8 warps (gemm.generate(..., warps=8): warps of 32 x 16) on a real GPU: D, Dh and E bit for bit
what the committed 64-row 4-warp kernels write on the same inputs, at the large
configuration's shapes (12 x 768, context 256): linear products with every epilogue flag,
the attention products per head (batched over 12 heads), split K in the 64-row rule's
splits, a weight gradient's column sums, GELU and its derivative.  The 64-row kernels are
checked against float64 in tests/gpu/test_coppelius_gemm.py; here the 128-row ones are checked
against them (each warp of a 128 x 64 tile runs a 64-row tile's warp's instructions in its
order, and an 8-warp tile's warp half of one, the same HMMAs per element in the same k order,
so nothing may differ), and the launch's whole output is checked to be written.

All from our own cubins through CuPy, the other tilings generated into a temporary folder and
launched with 256 threads and their shared memory (past 48 KiB: the function's dynamic shared
memory limit raised).  On the device machine: PYTHONPATH=compiler python3 -m pytest
tests/gpu/test_coppelius_gemm_tiles.py (tests/gpu/run.sh runs it with every GPU test).
Added in session 9 (the 8-warp cases later that session), not yet run on the H200.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

pytestmark = pytest.mark.gpu

REPO = Path(__file__).resolve().parents[2]
PREFIX = "coppelius-gemm"   # the model's name for its product kernels (examples/coppelius)
SOURCES = REPO / "examples" / "coppelius" / "Realization" / "Nvidia" / "SM86"
cp = pytest.importorskip("cupy")


@pytest.fixture(scope="module")
def kernels(target, tmp_path_factory):
    """((tile_m, warps), layout) -> (module, function, shared bytes): (64, 4) from the committed
    sources, (128, 8) and (64, 8) generated."""
    from bobc.sass import assemble_kernel
    from bobc.sass.cubin import write_cubin
    from bobc.sass.generate import gemm
    folder = tmp_path_factory.mktemp("gemm-tiles")
    out = {}
    for (tile_m, warps), sources in (((64, 4), SOURCES), ((128, 8), folder / "128x8"), ((64, 8), folder / "64x8")):
        if sources != SOURCES:
            gemm.write_all(sources, PREFIX, tile_m=tile_m, warps=warps)
        for name, variant in gemm.VARIANTS.items():
            assembled = assemble_kernel(sources / f"{variant.identity(PREFIX)}.sass", target)
            path = folder / f"{variant.identity(PREFIX)}.{tile_m}x{warps}.{target.name}.cubin"
            path.write_bytes(write_cubin(assembled, assembled.kernel_name, target, gemm.PARAMETER_BYTES,
                                         gemm.tiling(tile_m, warps).threads))
            module = cp.RawModule(path=str(path))
            function = module.get_function(assembled.kernel_name)
            shared = gemm.shared_bytes(variant, tile_m)
            function.max_dynamic_shared_size_bytes = shared
            out[(tile_m, warps), name] = (module, function, shared)
    return out


def run(kernels, tiling, layout, splits, arrays, **fields):
    """One product in `splits` splits (1: plain) by the kernel of tiling (tile_m, warps); `arrays`
    name -> device array for the pointer fields A, B, D, Dh, R, bias, E, U (absent: null)."""
    from bobc.sass.generate import gemm
    tile_m, warps = tiling
    m, n = fields["M"], fields["N"]
    pointers = {key: arrays[key].data.ptr for key in ("A", "B", "D", "Dh", "R", "bias", "E", "U") if key in arrays}
    workspace = cp.full(max(1, gemm.split_workspace_bytes(m, n, splits) // 4), np.nan, dtype=cp.float32)
    tickets = cp.zeros(gemm.split_ticket_bytes(m, n, tile_m) // 4, dtype=cp.uint32)
    grid, block = gemm.split_parameters(layout, splits, workspace.data.ptr, tickets.data.ptr, tile_m=tile_m,
                                        **pointers, **fields)
    _, function, shared = kernels[tiling, layout]
    function(grid, (gemm.tiling(tile_m, warps).threads,), tuple(np.frombuffer(block, dtype=np.uint64)),
             shared_mem=shared)
    cp.cuda.Device().synchronize()
    assert (tickets.get() == 0).all()


T, C, H, DH = 256, 768, 12, 64
# (what, layout, M, N, K, batches, splits, flags); A, B, D strides as the model lays them out
CASES = [
    ("qkv = x Wqkv + b, half", "nn", T, 3 * C, C, 1, 1, 2 | 4),
    ("u = x Wfc + b, half(gelu(u))", "nn", T, 4 * C, C, 1, 1, 2 | 4 | 64),
    ("x' = g Wfcproj + b + h (split)", "nn", T, C, 4 * C, 1, 4, 1 | 2 | 4),
    ("dg = dx' Wfcproj^T gelu'(u)", "nt", T, 4 * C, C, 1, 1, 4 | 8 | 128),
    ("dln1 = dqkv Wqkv^T (split 2)", "nt", T, C, 3 * C, 1, 2, 1 | 4),
    ("dWqkv = x^T dqkv, db", "tn", C, 3 * C, T, 1, 1, 32),
    ("dWfcproj = g^T dx', db", "tn", 4 * C, C, T, 1, 1, 1 | 32),
    ("G[head] = xf^T dlogits (split)", "tn", C, 256, T, 1, 2, 0),
    ("scores = q k^T / 8 per head", "nt", T, T, DH, H, 1, 4),
    ("o = p v per head", "nn", T, DH, T, H, 1, 1 | 4),
    ("dv = p^T do per head", "tn", T, DH, T, H, 1, 0),
]


@pytest.mark.parametrize("tiling", [(128, 8), (64, 8)], ids=["128x8", "64x8"])
@pytest.mark.parametrize("what,layout,m,n,k,z,splits,flags", CASES, ids=[c[0].split(" =")[0] for c in CASES])
def test_other_tilings_write_what_the_committed_tiles_write(kernels, tiling, what, layout, m, n, k, z, splits,
                                                            flags):
    rng = np.random.default_rng(m + n + k + z + flags)
    a_rows, a_cols = (k, m) if layout == "tn" else (m, k)
    b_rows, b_cols = (n, k) if layout == "nt" else (k, n)
    a = (rng.standard_normal(z * a_rows * a_cols)).astype(np.float16)
    b = (rng.standard_normal(z * b_rows * b_cols) * 0.05).astype(np.float16)
    inputs = dict(bias=rng.standard_normal(n).astype(np.float32),
                  R=rng.standard_normal(z * m * n).astype(np.float32),
                  U=(rng.standard_normal(z * m * n) * 3).astype(np.float32))
    fields = dict(M=m, N=n, K=k, lda=a_cols, ldb=b_cols, ldd=n, ldh=n, flags=flags, alpha=0.125 if z > 1 else 1.0)
    if z > 1:
        fields.update(batches=z, sA=a_rows * a_cols, sB=b_rows * b_cols, sD=m * n, sH=m * n)
    results = {}
    for each in ((64, 4), tiling):
        arrays = dict(A=cp.asarray(a), B=cp.asarray(b), D=cp.full(z * m * n, np.nan, dtype=cp.float32),
                      Dh=cp.full(z * m * n, np.nan, dtype=cp.float16), E=cp.full(n, np.nan, dtype=cp.float32),
                      **{key: cp.asarray(value) for key, value in inputs.items()})
        run(kernels, each, layout, splits, arrays, **fields)
        results[each] = {key: arrays[key].get() for key in ("D", "Dh", "E")}
    for key in ("D", "Dh", "E"):
        np.testing.assert_array_equal(results[tiling][key].view(np.uint8), results[64, 4][key].view(np.uint8),
                                      err_msg=f"{what}: {key}")
    d, dh, e = (results[64, 4][key] for key in ("D", "Dh", "E"))
    assert np.isnan(d).all() if flags & 8 else np.isfinite(d).all(), what
    assert np.isfinite(dh).all() if flags & 4 else np.isnan(dh).all(), what
    assert np.isfinite(e).all() if flags & 32 else np.isnan(e).all(), what
