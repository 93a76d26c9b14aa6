"""ptxas's kernels assembled by us from nvdisasm's listing, run on the GPU: same results as ptxas's.

Four kernels of tools/ptx_corpus/corpus3.cu, one per new part of the assembler:
tensor cores (tensor_mma_f16: HMMA.16816.F16, HMMA.1688.F16), binary64 (double_math:
DFMA, DADD, DMUL, DSETP, F2F), local memory (local_memory: LDL/STL with a stack frame)
and asynchronous copies (async_copy: LDGSTS, LDGDEPBAR, DEPBAR, through shared memory).
Each is assembled from the committed listing tests/sass/data/listings/corpus3.<arch>.lst.gz
(nvdisasm -hex of ptxas's cubin, as printed), wrapped by bobc.sass.cubin.write_cubin and
loaded with cupy.RawModule; the reference is ptxas's own cubin of the same PTX
(tests/gpu/data/corpus3.sm_90.cubin, made by the nvidia-cuda-nvcc wheel's ptxas -O3; the
PTX itself is ISA 9.5, newer than driver 580 JIT-compiles, so the cubin is carried), launched
with the same inputs.  Results must be bit-identical.  tests/sass/test_listings.py checks that
the committed listing is nvdisasm -hex of exactly that cubin.

On the device machine: PYTHONPATH=compiler python3 -m pytest tests/gpu/test_corpus_kernels.py
(tests/gpu/run.sh runs it with every GPU test).  Not yet run on a GPU.
"""
from __future__ import annotations

import gzip
from pathlib import Path

import numpy as np
import pytest

pytestmark = pytest.mark.gpu

REPO = Path(__file__).resolve().parents[2]
PTX = REPO / "tools" / "ptx_corpus" / "corpus3.ptx"
LISTINGS = REPO / "tests" / "sass" / "data" / "listings"
cp = pytest.importorskip("cupy")


@pytest.fixture(scope="module")
def ours(target, tmp_path_factory):
    """kernel name -> our function (from the listing)."""
    from bobc.sass.assembler import assemble_listing
    from bobc.sass.cubin import write_cubin
    text = gzip.decompress((LISTINGS / f"corpus3.{target.name}.lst.gz").read_bytes()).decode()
    kernels = assemble_listing(text, target, source_name=f"corpus3.{target.name}.lst")
    folder = tmp_path_factory.mktemp("corpus-cubins")
    functions = {}
    for name, parameters in PARAMETER_BYTES.items():
        path = folder / f"{name}.cubin"
        path.write_bytes(write_cubin(kernels[name], name, target, parameters, 1024))
        module = cp.RawModule(path=str(path))
        functions[name] = (module, module.get_function(name))
    return {name: f for name, (_, f) in functions.items()}


@pytest.fixture(scope="module")
def theirs(target):
    cubin = REPO / "tests" / "gpu" / "data" / f"corpus3.{target.name}.cubin"
    if not cubin.exists():
        pytest.fail(f"no ptxas cubin of corpus3 for {target.name} in tests/gpu/data")
    module = cp.RawModule(path=str(cubin))
    return lambda name: module.get_function(name)


PARAMETER_BYTES = {"tensor_mma_f16": 24, "double_math": 32, "local_memory": 24, "async_copy": 16}


def _both(name, ours, theirs, grid, block, make_args, outputs, shared_mem=0):
    """Run the kernel ours and theirs on identical fresh inputs; return both outputs."""
    results = []
    for function in (ours[name], theirs(name)):
        arrays = make_args()
        function(grid, block, tuple(arrays), shared_mem=shared_mem)
        cp.cuda.Device().synchronize()
        results.append([cp.asnumpy(arrays[i]) for i in outputs])
    return results


def test_hmma_kernel(ours, theirs):
    rng = np.random.default_rng(1)
    a = rng.integers(0, 2**32, 128, dtype=np.uint32) & np.uint32(0x3BFF3BFF)   # finite halves below 1
    b = rng.integers(0, 2**32, 64, dtype=np.uint32) & np.uint32(0x3BFF3BFF)
    make = lambda: [cp.zeros(64, dtype=np.uint32), cp.asarray(a), cp.asarray(b)]
    mine, ref = _both("tensor_mma_f16", ours, theirs, (1,), (32,), make, [0])
    np.testing.assert_array_equal(mine[0], ref[0])
    assert mine[0].any()


def test_dfma_kernel(ours, theirs):
    n = 4096
    rng = np.random.default_rng(2)
    x = rng.standard_normal(2 * n)
    f = rng.standard_normal(n).astype(np.float32)
    make = lambda: [cp.zeros(2 * n), cp.asarray(x), cp.asarray(f), np.int32(n)]
    mine, ref = _both("double_math", ours, theirs, (n // 256,), (256,), make, [0])
    np.testing.assert_array_equal(mine[0], ref[0])
    # and it is binary64 arithmetic: the first output against NumPy (fma contracted or not)
    xs, ys = x[:n], x[n:]
    r = xs * ys + 0.5 + xs * 3.0 - ys * ys
    r = np.where(xs < ys, r, r + 1.0)
    r = np.maximum(r, -xs) + np.abs(ys) + f.astype(np.float64) * xs + np.arange(n)
    np.testing.assert_allclose(mine[0][:n], r, rtol=1e-9, atol=1e-9)


def test_local_memory_kernel(ours, theirs):
    threads = 2048
    rng = np.random.default_rng(3)
    values = rng.standard_normal(threads * 48).astype(np.float32)
    index = rng.integers(0, 1000, threads).astype(np.int32)
    make = lambda: [cp.zeros(threads, dtype=np.float32), cp.asarray(values), cp.asarray(index)]
    mine, ref = _both("local_memory", ours, theirs, (threads // 128,), (128,), make, [0])
    np.testing.assert_array_equal(mine[0], ref[0])


def test_ldgsts_kernel(ours, theirs):
    blocks = 8
    rng = np.random.default_rng(4)
    values = rng.standard_normal(blocks * 256 * 4).astype(np.float32)
    make = lambda: [cp.zeros(blocks * 128, dtype=np.float32), cp.asarray(values)]
    # our cubin declares no static shared memory: the kernel's 4 KiB are given as dynamic, with
    # 1 KiB more for the window sm_90 code reserves below it (ptxas addresses it from 0x400)
    mine, ref = _both("async_copy", ours, theirs, (blocks,), (128,), make, [0], shared_mem=5120)
    np.testing.assert_array_equal(mine[0], ref[0])
    v = values.reshape(blocks, 256, 4)
    t = np.arange(128)
    want = (v[:, 255 - t, 0] + 2 * v[:, 255 - t, 1] + 3 * v[:, 255 - t, 2] + 4 * v[:, 255 - t, 3] - v[:, t, 0])
    np.testing.assert_allclose(mine[0].reshape(blocks, 128), want, rtol=1e-5, atol=1e-5)
