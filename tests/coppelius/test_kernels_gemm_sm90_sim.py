"""sm_90's own product kernels (coppelius-gemm-*.sm_90.sass: TMA copies, mbarriers, warpgroup MMA)
executed by the simulator, beside the HMMA kernels on the same launch words.

The simulator runs the copies and MMAs when they issue (bobc.sim.executor: UTMALDG decodes the
tensor map bobc.nvidia.tensor_map wrote, HGMMA reads its operands through the matrix descriptors
under the 128-byte swizzle), so these check the kernels' addressing, rings, barriers' phases and
epilogues on the CPU; the H200 runs them in tests/gpu/test_sm90_gemm.py.  Both kernels sum each
k16 step exactly and round once in the simulator, so D must be the HMMA kernel's bit for bit, as
it is on the H200."""
from __future__ import annotations

import numpy as np
import pytest

from bobc.nvidia.tensor_map import TiledTensor, encode_tiled
from bobc.sass.generate import gemm, gemm_sm90

from .test_kernels_gemm_sim import PREFIX, SOURCES, truth


def _run(layout, source, buffers, shared, words=None, **fields):
    from bobc.sim.kernel import buffer_addresses, run_kernel
    addresses = buffer_addresses(buffers)
    for key in ("A", "B", "D", "Dh", "R", "bias", "E", "U"):
        fields[key] = addresses[fields[key]] if fields.get(key) else 0
    block = gemm.pack_parameters(**fields)
    if words is not None:
        m, n, k, z = fields["M"], fields["N"], fields["K"], fields.get("batches", 1)
        a_dims = (m, k) if layout == "tn" else (k, m)
        b_dims = (k, n) if layout == "nt" else (n, k)
        maps = b"".join(encode_tiled(TiledTensor("float16", fields[x], (*dims, z), (2 * fields[ld], 2 * fields.get(s, 0)),
                                                 (64, 64, 1), swizzle="128b"))
                        for x, dims, ld, s in (("A", a_dims, "lda", "sA"), ("B", b_dims, "ldb", "sB")))
        buffers[words][:] = np.frombuffer(maps, dtype=np.uint8)
        block += np.array([addresses[words], addresses[words] + 128], dtype=np.uint64).tobytes()
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
