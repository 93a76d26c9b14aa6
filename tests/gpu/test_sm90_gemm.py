"""sm_90's own product kernels (bobc.sass.generate.gemm_sm90: TMA + HGMMA) on the H200.

The generator's nn / nt / tn kernels at 2 and 4 stages, assembled by bobc for sm_90, wrapped by
write_cubin and launched through CuPy with the 17 words of gemm.pack_parameters plus the two
tensor-map words (17, 18) the backend fills for a plan: here the test encodes the maps itself
(bobc.nvidia.tensor_map) from the shape, as the kernels' `//@ tensormap` lines describe them.
Each result must lie within ref_gemm.error_bound of float64 (test_coppelius_gemm's `expected`),
and is compared with today's HMMA kernel (coppelius-gemm-*.sass) on the same inputs (-s prints
whether they agree bit for bit).  A wrong barrier or copy hangs rather than fails: tests/gpu/run.sh
runs the file in a process of its own with a short timeout.  H200, 2026-12-03: 18 passed, every D and
Dh bit for bit the HMMA kernel's (bench/results/sm90-gemm-h200.md); 2026-12-04: 40 passed, the split
products also in clusters (tests/gpu/logs/2026-12-04-s23-run-pytest_sm90_gemm.log), through W.  A
reduction on chip in clusters (the first split reading its peers' partials from their shared memory)
failed here in sessions 24 and 27 at shapes the simulator runs right (2026-12-05: 38 passed, its two
cases with 4 splits and 2 stages failed, tests/gpu/logs/2026-12-05-s27-run-pytest_sm90_gemm.log) and
was taken out of the kernels: in clusters they add the partials through W (2026-12-05: 40 passed,
tests/gpu/logs/2026-12-05-s27-verify-pytest_sm90_gemm.log).
"""
from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

pytestmark = pytest.mark.gpu

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(Path(__file__).resolve().parent))
cp = pytest.importorskip("cupy")

import test_coppelius_gemm as base  # noqa: E402  (the HMMA kernels, the float64 truth)

MAP_WORDS = 2


@pytest.fixture(scope="module")
def sm90_kernels(target, tmp_path_factory):
    if target.name != "sm_90":
        pytest.skip("sm_90 kernels")
    from bobc.sass import assemble_kernel
    from bobc.sass.cubin import write_cubin
    from bobc.sass.generate import gemm, gemm_sm90
    folder = tmp_path_factory.mktemp("sm90-gemm")
    out = {}
    for stages in (2, 4):
        for name, variant in gemm.VARIANTS.items():
            source = folder / f"{name}-{stages}.sass"
            source.write_text(gemm_sm90.generate(variant, base.PREFIX, stages))
            assembled = assemble_kernel(source, target)
            # unclustered, and in clusters of (1, 1, S) for S splits (the cubin's cluster attribute:
            # CUDA then launches every grid of it in clusters, as bobc's QMDs for a clustered launch)
            for cluster in (None, (1, 1, 2), (1, 1, 3), (1, 1, 4)):
                cubin = folder / f"{name}-{stages}-{cluster[2] if cluster else 1}.cubin"
                cubin.write_bytes(write_cubin(assembled, assembled.kernel_name, target,
                                              gemm.PARAMETER_BYTES + 8 * MAP_WORDS, gemm_sm90.BLOCK_THREADS,
                                              cluster=cluster))
                module = cp.RawModule(path=str(cubin))
                function = module.get_function(assembled.kernel_name)
                function.max_dynamic_shared_size_bytes = gemm_sm90.shared_bytes(stages)
                key = (name, stages) if cluster is None else (name, stages, cluster)
                out[key] = (module, function, gemm_sm90.shared_bytes(stages))
    return out


def _maps(layout: str, fields: dict) -> tuple[bytes, list]:
    """A's and B's tensor maps for the launch (3-D: contiguous dimension, rows, batch)."""
    from bobc.nvidia.tensor_map import TiledTensor, encode_tiled
    m, n, k, z = fields["M"], fields["N"], fields["K"], fields.get("batches", 1)
    a_dims = (m, k) if layout == "tn" else (k, m)
    b_dims = (k, n) if layout == "nt" else (n, k)
    blobs = []
    for address, dims, ld, stride in ((fields["A"], a_dims, fields["lda"], fields.get("sA", 0)),
                                      (fields["B"], b_dims, fields["ldb"], fields.get("sB", 0))):
        blobs.append(encode_tiled(TiledTensor("float16", address, (*dims, z), (2 * ld, 2 * stride), (64, 64, 1),
                                              swizzle="128b")))
    return b"".join(blobs)


def launch90(kernels, layout, stages, **fields):
    from bobc.sass.generate import gemm, gemm_sm90
    pointers = {}
    for key in ("A", "B", "D", "Dh", "R", "bias", "E", "U"):
        value = fields.pop(key, None)
        pointers[key] = value
        offset = fields.pop(f"{key}_offset", 0)
        fields[key] = 0 if value is None else value.data.ptr + offset * value.itemsize
    maps = cp.asarray(np.frombuffer(_maps(layout, fields), dtype=np.uint8))
    block = gemm.pack_parameters(**fields) + np.array([maps.data.ptr, maps.data.ptr + 128], dtype=np.uint64).tobytes()
    _, function, shared = kernels[layout, stages]
    function(gemm.grid(fields["M"], fields["N"], fields.get("batches", 1)), (gemm_sm90.BLOCK_THREADS,),
             tuple(np.frombuffer(block, dtype=np.uint64)), shared_mem=shared)
    cp.cuda.Device().synchronize()
    del maps


CASES = [  # (layout, M, N, K, batches, what)
    ("nt", 64, 64, 64, 1, "one tile, one step"),
    ("nt", 256, 768, 2304, 1, "dx = dqkv Wqkv^T"),
    ("nn", 256, 2304, 768, 1, "qkv = x Wqkv"),
    ("nn", 128, 192, 96, 1, "K = 96: a half step zero-filled"),
    ("tn", 768, 2304, 256, 1, "dWqkv = x^T dqkv"),
    ("tn", 192, 128, 160, 1, "tn, K = 160"),
    ("nt", 128, 128, 64, 3, "batched (heads)"),
]


@pytest.mark.parametrize("stages", [2, 4])
@pytest.mark.parametrize("layout,m,n,k,batches,what", CASES, ids=[c[-1] for c in CASES])
def test_products_match_float64_and_hmma(sm90_kernels, target, layout, m, n, k, batches, what, stages):
    rng = np.random.default_rng(m + n + k + batches)
    a_rows, a_cols = (k, m) if layout == "tn" else (m, k)
    b_rows, b_cols = (n, k) if layout == "nt" else (k, n)
    sa, sb = a_rows * a_cols, b_rows * b_cols
    a = base.halves(rng, sa * batches)
    b = base.halves(rng, sb * batches, 0.05)
    p = dict(M=m, N=n, K=k, lda=a_cols, ldb=b_cols, ldd=n, alpha=1.0, batches=batches,
             sA=sa if batches > 1 else 0, sB=sb if batches > 1 else 0, sD=m * n if batches > 1 else 0)
    d = cp.full(m * n * batches, np.nan, dtype=cp.float32)
    launch90(sm90_kernels, layout, stages, A=cp.asarray(a), B=cp.asarray(b), D=d, **p)
    got = d.get().reshape(batches, m, n)
    for z, truth in enumerate(base.expected(layout, a, b, p)):
        base.check(got[z], truth)
    theirs = cp.full(m * n * batches, np.nan, dtype=cp.float32)
    base.launch(_hmma(target), layout, A=cp.asarray(a), B=cp.asarray(b), D=theirs, **p)
    same = np.array_equal(got.view(np.uint32), theirs.get().reshape(batches, m, n).view(np.uint32))
    print(f"{what} ({layout} {m}x{n}x{k} x{batches}, {stages} stages): bit for bit the HMMA kernel's: {same}")


@pytest.mark.parametrize("flags", [1 | 2 | 4, 4 | 8, 2 | 4 | 64, 4 | 128])
def test_epilogue_flags_as_the_hmma_kernel(sm90_kernels, target, flags):
    """alpha, bias, R (in place), Dh, no D, GELU and its derivative: the epilogue is the HMMA
    kernel's code over the warpgroup's accumulators, so given the same products' values the
    outputs follow; checked against float64 for the linear flags and against the HMMA kernel
    (within a binary16 ulp of Dh) for GELU."""
    rng = np.random.default_rng(flags)
    m, n, k = 128, 192, 128
    a, b = base.halves(rng, m * k), base.halves(rng, k * n, 0.05)
    bias = rng.standard_normal(n).astype(np.float32)
    r = rng.standard_normal(m * n).astype(np.float32)
    u = rng.standard_normal(m * n).astype(np.float32)
    p = dict(M=m, N=n, K=k, lda=k, ldb=n, ldd=n, ldh=n, alpha=0.75, flags=flags)
    outputs = []
    for run in ("sm90", "hmma"):
        d = cp.asarray(r)
        h = cp.zeros(m * n, dtype=cp.float16)
        args = dict(A=cp.asarray(a), B=cp.asarray(b), D=d, R=d, Dh=h, bias=cp.asarray(bias), U=cp.asarray(u), **p)
        if run == "sm90":
            launch90(sm90_kernels, "nn", 2, **args)
        else:
            base.launch(_hmma(target), "nn", **args)
        outputs.append((d.get().reshape(m, n), h.get().reshape(m, n)))
    (d90, h90), (dh, hh) = outputs
    if flags & 8:
        assert (d90 == r.reshape(m, n)).all()
    if not flags & (64 | 128):
        truth = base.expected("nn", a, b, p, bias=bias if flags & 2 else None, addend=r if flags & 1 else None)[0]
        if not flags & 8:
            base.check(d90, truth)
        v, bound = truth
        assert (np.abs(h90.astype(np.float64) - v) <= bound + np.abs(v) * 2.0 ** -11).all()
    else:
        ulp = np.abs(np.spacing(hh.astype(np.float16))).astype(np.float32)
        assert (np.abs(h90.astype(np.float32) - hh.astype(np.float32)) <= 2 * ulp + 1e-3).all()
    print(f"flags {flags}: D bit for bit the HMMA kernel's: {np.array_equal(d90.view(np.uint32), dh.view(np.uint32))}, "
          f"Dh: {np.array_equal(h90.view(np.uint16), hh.view(np.uint16))}")


_HMMA = {}


def _hmma(target):
    """Today's HMMA kernels (the committed sources), built once per process, as launch() takes them."""
    if not _HMMA:
        import tempfile
        from bobc.sass import assemble_kernel
        from bobc.sass.cubin import write_cubin
        from bobc.sass.generate import gemm
        folder = Path(tempfile.mkdtemp(prefix="hmma-gemm"))
        for name, variant in gemm.VARIANTS.items():
            assembled = assemble_kernel(base.SOURCES / f"{variant.identity(base.PREFIX)}.sass", target)
            path = folder / f"{name}.cubin"
            path.write_bytes(write_cubin(assembled, assembled.kernel_name, target, gemm.PARAMETER_BYTES, gemm.THREADS))
            module = cp.RawModule(path=str(path))
            _HMMA[name] = (module, module.get_function(assembled.kernel_name), gemm.shared_bytes(variant))
    return _HMMA


def _maps_from_words(layout: str, block: bytes) -> bytes:
    """A's and B's tensor maps as the kernels' `//@ tensormap` lines derive them from the launch's
    words (3-D: the stored matrix's contiguous dimension, its rows, the batches)."""
    import struct
    from bobc.nvidia.tensor_map import TiledTensor, encode_tiled
    a, b = struct.unpack_from("<QQ", block, 0)
    m, n, k, _, lda, ldb, _, _, sa, sb = struct.unpack_from("<10I", block, 0x30)
    batches = struct.unpack_from("<I", block, 0x64)[0]
    a_dims = (m, k) if layout == "tn" else (k, m)
    b_dims = (k, n) if layout == "nt" else (n, k)
    return b"".join(encode_tiled(TiledTensor("float16", address, (*dims, batches), (2 * ld, 2 * stride), (64, 64, 1),
                                             swizzle="128b"))
                    for address, dims, ld, stride in ((a, a_dims, lda, sa), (b, b_dims, ldb, sb)))


def _run_both(sm90_kernels, target, layout, grid, block, outputs, stages=2, cluster=None):
    """The same launch words through the HMMA kernel and the sm_90 kernel; `outputs` name the arrays
    they write (reset to NaN / zero before each); returns each kernel's copies of them."""
    from bobc.sass.generate import gemm, gemm_sm90
    maps = cp.asarray(np.frombuffer(_maps_from_words(layout, block), dtype=np.uint8))
    words90 = block + np.array([maps.data.ptr, maps.data.ptr + 128], dtype=np.uint64).tobytes()
    results = []
    for kind in ("hmma", "sm90"):
        for array in outputs.values():
            array.fill(0 if array.dtype in (cp.float16, cp.uint32) else np.nan)
        if kind == "hmma":
            _, function, shared = _hmma(target)[layout]
            function(grid, (gemm.THREADS,), tuple(np.frombuffer(block, dtype=np.uint64)), shared_mem=shared)
        else:
            _, function, shared = sm90_kernels[(layout, stages) if cluster is None else (layout, stages, cluster)]
            function(grid, (gemm_sm90.BLOCK_THREADS,), tuple(np.frombuffer(words90, dtype=np.uint64)),
                     shared_mem=shared)
        cp.cuda.Device().synchronize()
        results.append({name: array.get() for name, array in outputs.items()})
    del maps
    return results


SPLITS = [  # (layout, M, N, K, flags, what): products gemm.split_count splits in the update
    ("nn", 256, 768, 3072, 1 | 2, "x' = g Wfcproj + b + h"),
    ("nt", 256, 768, 2304, 0, "dln1 = dqkv Wqkv^T"),
    ("nt", 256, 768, 768, 4 | 8, "do16 = dres Wproj^T (binary16 only)"),
    ("tn", 768, 256, 256, 0, "G[head] = xf^T dlogits"),
]


@pytest.mark.parametrize("clustered", [False, True], ids=["through-W", "in-clusters"])
@pytest.mark.parametrize("stages", [2, 4])
@pytest.mark.parametrize("layout,m,n,k,flags,what", SPLITS, ids=[c[-1] for c in SPLITS])
def test_split_products_bit_for_bit_the_hmma_kernels(sm90_kernels, target, layout, m, n, k, flags, what, stages,
                                                     clustered):
    """Flag 16: S blocks a tile, partials in W, the tile's last block adds them in split order
    (gemm._split, over the warpgroup's accumulators): D and Dh bit for bit the HMMA kernel's,
    and every ticket back at zero.  Also launched in clusters of (1, 1, S) (the cubin's cluster
    attribute), where every shared address takes the block's rank: the same path through W."""
    from bobc.sass.generate import gemm
    splits = max(2, gemm.split_count(m, n, k))
    rng = np.random.default_rng(m + n + k + flags)
    a_rows, a_cols = (k, m) if layout == "tn" else (m, k)
    b_rows, b_cols = (n, k) if layout == "nt" else (k, n)
    a, b = cp.asarray(base.halves(rng, a_rows * a_cols)), cp.asarray(base.halves(rng, b_rows * b_cols, 0.05))
    bias = cp.asarray(rng.standard_normal(n).astype(np.float32))
    r = cp.asarray(rng.standard_normal(m * n).astype(np.float32))
    d, h = cp.zeros(m * n, dtype=cp.float32), cp.zeros(m * n, dtype=cp.float16)
    workspace = cp.zeros(gemm.split_workspace_bytes(m, n, splits) // 4, dtype=cp.float32)
    tickets = cp.zeros(gemm.split_ticket_bytes(m, n) // 4, dtype=cp.uint32)
    grid, block = gemm.split_parameters(layout, splits, workspace.data.ptr, tickets.data.ptr, A=a.data.ptr,
                                        B=b.data.ptr, D=d.data.ptr, Dh=h.data.ptr, R=r.data.ptr, bias=bias.data.ptr,
                                        M=m, N=n, K=k, lda=a_cols, ldb=b_cols, ldd=n, ldh=n, flags=flags)
    # in clusters, five times: a race between a cluster's blocks would show as a few wrong elements,
    # different each run (as the on-chip reduction's did, sessions 24 and 27)
    for _ in range(5 if clustered else 1):
        theirs, ours = _run_both(sm90_kernels, target, layout, grid, block, {"D": d, "Dh": h, "W": workspace},
                                 stages, (1, 1, splits) if clustered else None)
        assert (tickets.get() == 0).all()
        # the path taken (W NaN before each kernel): every split's partial through W
        assert not np.isnan(ours["W"]).any()
        np.testing.assert_array_equal(ours["D"].view(np.uint32), theirs["D"].view(np.uint32))
        np.testing.assert_array_equal(ours["Dh"].view(np.uint16), theirs["Dh"].view(np.uint16))
    assert not (flags & 8) or np.isnan(ours["D"]).all()
    assert (flags & 8) or not np.isnan(ours["D"]).any()


COLUMN_SUMS = [("tn", 768, 2304, 256, "dWqkv and its bias"), ("tn", 3072, 768, 256, "dWfcproj and its bias"),
               ("nn", 128, 192, 96, "nn, K = 96")]


@pytest.mark.parametrize("stages", [2, 4])
@pytest.mark.parametrize("layout,m,n,k,what", COLUMN_SUMS, ids=[c[-1] for c in COLUMN_SUMS])
def test_column_sums_bit_for_bit_the_hmma_kernels(sm90_kernels, target, layout, m, n, k, what, stages):
    """Flag 32: E[n] = sum_k B[k, n] from the swizzled B tiles in shared memory, in the HMMA kernel's
    association (four row groups k mod 4, then (s0 + s1) + (s2 + s3)): E and D bit for bit."""
    from bobc.sass.generate import gemm
    rng = np.random.default_rng(m + n + k)
    a_rows, a_cols = (k, m) if layout == "tn" else (m, k)
    a, b = cp.asarray(base.halves(rng, a_rows * a_cols)), cp.asarray(base.halves(rng, k * n, 0.05))
    d, e = cp.zeros(m * n, dtype=cp.float32), cp.zeros(n, dtype=cp.float32)
    block = gemm.pack_parameters(A=a.data.ptr, B=b.data.ptr, D=d.data.ptr, E=e.data.ptr, M=m, N=n, K=k,
                                 lda=a_cols, ldb=n, ldd=n, flags=32)
    theirs, ours = _run_both(sm90_kernels, target, layout, gemm.grid(m, n), block, {"D": d, "E": e}, stages)
    np.testing.assert_array_equal(ours["E"].view(np.uint32), theirs["E"].view(np.uint32))
    np.testing.assert_array_equal(ours["D"].view(np.uint32), theirs["D"].view(np.uint32))
    reference = b.get().reshape(k, n).astype(np.float64).sum(axis=0)
    assert np.allclose(ours["E"], reference, rtol=1e-5, atol=1e-3)
