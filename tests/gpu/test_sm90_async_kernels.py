"""sm_90's tensor-memory copies, mbarriers and warpgroup MMA as OUR assembler encodes them, on the H200.

Two ptxas kernels of the corpus: tools/ptx_corpus/sm90_tma_tile_load.ptx (one TMA copy of a tile completing on an
mbarrier, UTMALDG / SYNCS.*) and sm90_hgmma_product.ptx (a product: TMA ring, HGMMA.64x128x16,
WARPGROUP.ARRIVE / DEPBAR).  Each is compiled here by ptxas -arch=sm_90a; its nvdisasm -hex listing
is assembled by bobc (assemble_listing: every instruction re-encoded from its text, control codes
from the listing), wrapped by bobc.sass.cubin.write_cubin, and both cubins run on identical inputs
with tensor maps written by bobc.nvidia.tensor_map.  Outputs must be bit-identical, and the product
must match a binary32 product.  Our cubin declares no static shared memory: what ptxas's addresses
(the mbarriers from 0x400, the tiles from 0x800) need is given as dynamic shared memory.  Nor does it
carry the .nv.info records ptxas adds for mbarrier kernels (0x38: how many, 0x39: which SYNCS name
one): whether the driver needs them is what this test also finds out.

Not yet run on a GPU: written in session 13, after that session's device time ran out (both kernels
assemble whole from their listings on the CPU: tests/sass/test_listings.py).
"""
from __future__ import annotations

import subprocess
from pathlib import Path

import numpy as np
import pytest

from bobc.nvidia.tensor_map import TiledTensor, encode_tiled

pytestmark = pytest.mark.gpu

cp = pytest.importorskip("cupy")
DATA = Path(__file__).resolve().parents[2] / "tools" / "ptx_corpus"
LOW_WINDOW = 2048       # below the tiles: 1 KiB sm_90 reserves, then the kernels' mbarriers


@pytest.fixture(scope="module")
def kernels(target, tmp_path_factory):
    """name -> (ptxas's module, our module, kernel names)."""
    if target.name != "sm_90":
        pytest.skip("sm_90 kernels")
    from bobc.nvtools import nvdisasm, ptxas
    from bobc.sass.assembler import assemble_listing
    from bobc.sass.cubin import write_cubin
    if ptxas() is None or nvdisasm() is None:
        pytest.fail("ptxas and nvdisasm are needed (the device machine has them in /usr/local/cuda/bin)")
    folder = tmp_path_factory.mktemp("sm90-async")
    built = {}
    for stem, parameter_bytes, threads in (("tma_tile_load", 36, 128), ("hgmma_product", 32, 128)):
        cubin = folder / f"{stem}.cubin"
        subprocess.run([ptxas(), "-arch=sm_90a", "-O3", str(DATA / f"sm90_{stem}.ptx"), "-o", str(cubin)], check=True)
        listing = subprocess.run([nvdisasm(), "-hex", str(cubin)], check=True, capture_output=True,
                                 text=True).stdout
        ours = {}
        for name, assembled in assemble_listing(listing, target, source_name=f"{stem}.lst").items():
            path = folder / f"ours-{name}.cubin"
            path.write_bytes(write_cubin(assembled, name, target, parameter_bytes, threads))
            ours[name] = cp.RawModule(path=str(path))
        built[stem] = (cp.RawModule(path=str(cubin)), ours)
    return built


def _descriptor(t: TiledTensor):
    return cp.asarray(np.frombuffer(encode_tiled(t), dtype=np.uint8))


def test_tma_tile_copy_ours_equals_ptxas(kernels):
    theirs, ours = kernels["tma_tile_load"]
    rng = np.random.default_rng(7)
    host = rng.standard_normal((256, 768)).astype(np.float16)
    tensor = cp.asarray(host)
    t = TiledTensor("float16", int(tensor.data.ptr), (768, 256), (1536,), (64, 128), swizzle="128b")
    descriptor = _descriptor(t)
    nbytes = t.box_bytes()
    results = []
    for module in (theirs, ours["tma_tile_load_2d"]):
        out = cp.zeros(nbytes + 16, dtype=cp.uint8)
        kernel = module.get_function("tma_tile_load_2d")
        kernel((1,), (128,), (np.uint64(descriptor.data.ptr), np.uint64(out.data.ptr), np.uint32(64),
                              np.uint32(128), np.uint32(0), np.uint32(nbytes), np.uint32(nbytes)),
               shared_mem=LOW_WINDOW + nbytes)
        cp.cuda.Device().synchronize()
        results.append(cp.asnumpy(out))
    assert results[0][:nbytes].any()
    np.testing.assert_array_equal(results[1], results[0])


@pytest.mark.parametrize("m, n, k", [(256, 512, 768), (128, 256, 192)])
def test_hgmma_product_ours_equals_ptxas(kernels, m, n, k):
    theirs, ours = kernels["hgmma_product"]
    rng = np.random.default_rng(m + n + k)
    a = cp.asarray(rng.standard_normal((m, k)).astype(np.float16))
    b = cp.asarray(rng.standard_normal((n, k)).astype(np.float16))
    maps = [_descriptor(TiledTensor("float16", int(x.data.ptr), (k, rows), (2 * k,), (64, box), swizzle="128b"))
            for x, rows, box in ((a, m, 64), (b, n, 128))]
    stages, stage_bytes = 4, (64 + 128) * 128
    results = []
    for module in (theirs, ours["probe"]):
        d = cp.zeros((m, n), dtype=cp.float16)
        kernel = module.get_function("probe")
        shared = LOW_WINDOW + stages * stage_bytes
        kernel.max_dynamic_shared_size_bytes = shared
        kernel((n // 128, m // 64, 1), (128,), (np.uint64(maps[0].data.ptr), np.uint64(maps[1].data.ptr),
                                                np.uint64(d.data.ptr), np.uint32(n), np.uint32(k // 64)),
               shared_mem=shared)
        cp.cuda.Device().synchronize()
        results.append(cp.asnumpy(d))
    reference = cp.asnumpy(cp.matmul(a.astype(cp.float32), b.astype(cp.float32).T))
    error = np.max(np.abs(results[0].astype(np.float32) - reference))
    assert error <= 2e-3 * np.max(np.abs(reference)) + 1e-2, error
    np.testing.assert_array_equal(results[1].view(np.uint16), results[0].view(np.uint16))
