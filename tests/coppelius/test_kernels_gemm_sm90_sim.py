"""sm_90's own product kernels (coppelius-gemm-*.sm_90.sass: TMA copies, mbarriers, warpgroup MMA)
executed by the simulator, beside the HMMA kernels on the same launch words.

The simulator runs the copies and MMAs when they issue (bobc.sim.executor: UTMALDG decodes the
tensor map bobc.nvidia.tensor_map wrote, HGMMA reads its operands through the matrix descriptors
under the 128-byte swizzle), so these check the kernels' addressing, rings, barriers' phases and
epilogues on the CPU; the H200 runs them in tests/gpu/test_sm90_gemm.py.  Both kernels sum each
k16 step exactly and round once in the simulator, so D must be the HMMA kernel's bit for bit, as
it is on the H200."""
from __future__ import annotations

import struct

import numpy as np
import pytest

from bobc.nvidia.tensor_map import TiledTensor, encode_tiled
from bobc.sass.generate import gemm, gemm_sm90

from .test_kernels_gemm_sim import PREFIX, SOURCES, truth


def _tensor_maps(batches: int, *operands) -> np.ndarray:
    """The two tensor maps a launch's words 17 and 18 point at (A's, then B's), as the backend
    writes them: each operand (address, (inner, outer) elements, leading dimension, batch stride in
    elements) over `batches`, 64 x 64 boxes under the 128-byte swizzle."""
    maps = b"".join(encode_tiled(TiledTensor("float16", address, (*dims, batches), (2 * ld, 2 * stride),
                                             (64, 64, 1), swizzle="128b"))
                    for address, dims, ld, stride in operands)
    return np.frombuffer(maps, dtype=np.uint8)


def with_tensor_maps(layout, block: bytes, buffers, words: str = "maps") -> bytes:
    """`block` with words 17 and 18 naming A's and B's tensor maps, written into buffers[words] from
    the block's own words as the kernels' `//@ tensormap` lines read them (M, N, K, lda, ldb, sA, sB,
    the batches: a split launch's are its split's)."""
    from bobc.sim.kernel import buffer_addresses
    at = buffer_addresses(buffers)
    a, b = struct.unpack_from("<2Q", block, 0)
    m, n, k, _, lda, ldb = struct.unpack_from("<6I", block, 0x30)
    sa, sb = struct.unpack_from("<2I", block, 0x50)
    (batches,) = struct.unpack_from("<I", block, 0x64)
    a_dims = (m, k) if layout == "tn" else (k, m)
    b_dims = (k, n) if layout == "nt" else (n, k)
    buffers[words][:] = _tensor_maps(batches, (a, a_dims, lda, sa), (b, b_dims, ldb, sb))
    return block[:0x88] + struct.pack("<2Q", at[words], at[words] + 128) + block[0x98:]


def _run(layout, source, buffers, shared, words=None, **fields):
    from bobc.sim.kernel import buffer_addresses, run_kernel
    addresses = buffer_addresses(buffers)
    for key in ("A", "B", "D", "Dh", "R", "bias", "E", "U"):
        fields[key] = addresses[fields[key]] if fields.get(key) else 0
    block = gemm.pack_parameters(**fields)
    if words is not None:
        block = with_tensor_maps(layout, block, buffers, words)
    return run_kernel(source.read_text(), "sm_90", grid=gemm.grid(fields["M"], fields["N"], fields.get("batches", 1)),
                      block=(gemm.THREADS, 1, 1), params=block, buffers=buffers, shared_bytes=shared)


SHAPES = [(128, 128, 160), (64, 128, 416)]


@pytest.mark.parametrize("m,n,k", SHAPES, ids=[f"{m}x{n}x{k}" for m, n, k in SHAPES])
@pytest.mark.parametrize("layout", sorted(gemm.VARIANTS))
def test_sm90_kernel_is_the_hmma_kernel_bit_for_bit(layout, m, n, k):
    """M = N = 128, K = 160: three 64-steps, the last half zero-filled by the copy, all in the
    ring's first fill; M = 64, N = 128, K = 416: seven steps, so thread 0 refills three stages in
    the loop (each step's descriptors, copy words and branch predicates written a step ahead).
    With bias, the binary16 copy and (nn, tn) the column sums of B."""
    rng = np.random.default_rng(5)
    a_rows, a_cols = (k, m) if layout == "tn" else (m, k)
    b_rows, b_cols = (n, k) if layout == "nt" else (k, n)
    a = rng.standard_normal(a_rows * a_cols).astype(np.float16)
    b = rng.standard_normal(b_rows * b_cols).astype(np.float16)
    bias = rng.standard_normal(n).astype(np.float32)
    flags = 2 | 4 | (32 if gemm.VARIANTS[layout].column_sums else 0)
    outputs = []
    variant = gemm.VARIANTS[layout]
    for source, shared, words in ((SOURCES / f"{variant.identity(PREFIX)}.sass", gemm.shared_bytes(variant), None),
                                  (SOURCES / f"{variant.identity(PREFIX)}.sm_90.sass", gemm_sm90.shared_bytes(), "maps")):
        buffers = {"a": a, "b": b, "bias": bias, "d": np.full(m * n, np.nan, np.float32),
                   "h": np.zeros(m * n, np.float16), "e": np.full(n, np.nan, np.float32),
                   "maps": np.zeros(256, np.uint8)}
        outputs.append(_run(layout, source, buffers, shared, words, A="a", B="b", D="d", Dh="h", bias="bias", E="e",
                            M=m, N=n, K=k, lda=a_cols, ldb=b_cols, ldd=n, ldh=n, flags=flags))
    hmma, ours = outputs
    v, bound = truth(layout, a, b, m, n, k, a_cols, b_cols, bias=bias)
    assert (np.abs(ours["d"].reshape(m, n).astype(np.float64) - v) <= bound).all()
    for name in ("d", "h", "e") if flags & 32 else ("d", "h"):
        np.testing.assert_array_equal(ours[name].view(np.uint8), hmma[name].view(np.uint8))


SPLIT_CASES = [("nn", 2), ("nt", 3), ("tn", 4)]


def _split_run(layout, splits, text, shared, cluster, seed=0):
    """Flag 16 over M = 64, N = 128 (two tiles), K = 192 (2, 3 splits) or 256 (4), with bias and
    the binary16 copy: the kernel `text` launched in clusters of `cluster`; the outputs."""
    from bobc.sim.kernel import buffer_addresses, run_kernel
    rng = np.random.default_rng(31 + splits + seed)
    m, n, k = 64, 128, 192 if splits < 4 else 256
    a_rows, a_cols = (k, m) if layout == "tn" else (m, k)
    b_rows, b_cols = (n, k) if layout == "nt" else (k, n)
    a = rng.standard_normal(a_rows * a_cols).astype(np.float16)
    b = rng.standard_normal(b_rows * b_cols).astype(np.float16)
    bias = rng.standard_normal(n).astype(np.float32)
    buffers = {"a": a, "b": b, "bias": bias, "d": np.full(m * n, np.nan, np.float32),
               "h": np.zeros(m * n, np.float16), "maps": np.zeros(256, np.uint8),
               "w": np.full(gemm.split_workspace_bytes(m, n, splits) // 4, np.nan, np.float32),
               "tickets": np.zeros(gemm.split_ticket_bytes(m, n) // 4, np.uint32)}
    at = buffer_addresses(buffers)
    grid, block = gemm.split_parameters(layout, splits, at["w"], at["tickets"], A=at["a"], B=at["b"], D=at["d"],
                                        Dh=at["h"], bias=at["bias"], M=m, N=n, K=k, lda=a_cols, ldb=b_cols,
                                        ldd=n, ldh=n, flags=2 | 4)
    if "//@ tensormap" in text:
        block = with_tensor_maps(layout, block, buffers)
    return run_kernel(text, "sm_90", grid=grid, block=(gemm.THREADS, 1, 1), params=block,
                      buffers=buffers, shared_bytes=shared, cluster=cluster)


@pytest.mark.parametrize("layout,splits", SPLIT_CASES, ids=[f"{l}.S{s}" for l, s in SPLIT_CASES])
def test_split_in_clusters(layout, splits):
    """Flag 16 launched in clusters of (1, 1, S), beside the unclustered launch and the HMMA kernel:
    the committed kernel adds the partials through W and the tickets either way (its shared
    addresses in the cluster-wide form, which a launch in clusters requires), so D and Dh are bit for
    bit the HMMA kernel's and the tickets zero again.  Two tiles, so two clusters."""
    variant = gemm.VARIANTS[layout]
    committed = (SOURCES / f"{variant.identity(PREFIX)}.sm_90.sass").read_text()
    hmma, *ours = (
        _split_run(layout, splits, (SOURCES / f"{variant.identity(PREFIX)}.sass").read_text(),
                   gemm.shared_bytes(variant), (1, 1, 1)),
        _split_run(layout, splits, committed, gemm_sm90.shared_bytes(), (1, 1, 1)),
        _split_run(layout, splits, committed, gemm_sm90.shared_bytes(), (1, 1, splits)))
    for out in ours:
        for name in ("d", "h"):
            np.testing.assert_array_equal(out[name].view(np.uint8), hmma[name].view(np.uint8))
        assert (out["tickets"] == 0).all()
    assert not np.isnan(ours[0]["w"]).any() and not np.isnan(ours[1]["w"]).any()


def _without(text: str, comment: str) -> str:
    """The kernel text without the one BAR.SYNC whose comment starts with `comment`."""
    lines = text.splitlines()
    at = [i for i, line in enumerate(lines) if "BAR.SYNC" in line and f"// {comment}" in line]
    assert len(at) == 1, at
    return "\n".join(lines[:at[0]] + lines[at[0] + 1:]) + "\n"


def test_the_ring_is_rewritten_only_after_every_warp_waited_for_its_mmas():
    """A warp's WARPGROUP.DEPBAR waits for its own part of the warpgroup's MMAs; the others may still
    be reading the ring.  On the H200 a split reduction whose later splits stored their partials into
    the ring right after their own wait gave D wrong in about 1% of its elements, differently each run
    (session 24).  The simulator refuses a store -- or a TMA copy, as the loop's refill -- into bytes
    an MMA may still read, so both barriers are checked here (the last split block's, before it stages
    the partials through the ring, and the loop's): without either, the fault names it."""
    from bobc.sim.faults import SimulationFault
    variant = gemm.VARIANTS["nt"]
    committed = (SOURCES / f"{variant.identity(PREFIX)}.sm_90.sass").read_text()
    with pytest.raises(SimulationFault, match=r"stores to shared 0x[0-9a-f]+, which a warpgroup MMA"):
        # K = 192 in 3 splits: one step each, so the ticket goes where that step's MMAs read
        _split_run("nt", 3, _without(committed, "every thread's partial stored (and the ring is no longer read)"),
                   gemm_sm90.shared_bytes(), (1, 1, 1))
    with pytest.raises(SimulationFault, match="a TMA copy writes shared .* which a warpgroup MMA"):
        # 7 steps in a ring of 2: the loop refills a stage each step
        m, n, k = 64, 128, 416
        rng = np.random.default_rng(3)
        buffers = {"a": rng.standard_normal(m * k).astype(np.float16), "b": rng.standard_normal(n * k).astype(np.float16),
                   "d": np.zeros(m * n, np.float32), "maps": np.zeros(256, np.uint8)}
        from pathlib import Path
        import tempfile
        with tempfile.TemporaryDirectory() as folder:
            source = Path(folder) / "k.sass"
            source.write_text(_without(committed, "every warp is done with the stage"))
            _run("nt", source, buffers, gemm_sm90.shared_bytes(), "maps", A="a", B="b", D="d",
                 M=m, N=n, K=k, lda=k, ldb=k, ldd=n, ldh=n, flags=0)
