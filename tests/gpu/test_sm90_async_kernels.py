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

H200, 2026-12-03: 3 passed (one process each).  The first runs failed in this test's own launch:
ptxas's cubin declares 4-byte parameters, ours 8-byte words, and the driver copies each argument by
the cubin's parameter table, so our cubin must be given the same bytes as 8-byte words (_arguments);
ptxas's .nv.info mbarrier records are not needed (bench/results/sm90-gemm-h200.md).
The cubins and listings come from the project's pinned ptxas / nvdisasm (tests/gpu/prepare.sh writes them
into .device/sm90-async), so the forms are those the corpus taught the assembler.
"""
from __future__ import annotations

import struct
import subprocess
from pathlib import Path

import numpy as np
import pytest

from bobc.nvidia.tensor_map import TiledTensor, encode_tiled

pytestmark = pytest.mark.gpu

cp = pytest.importorskip("cupy")
DATA = Path(__file__).resolve().parents[2] / "tools" / "ptx_corpus"
PREBUILT = Path(__file__).resolve().parents[2] / ".device" / "sm90-async"   # tests/gpu/prepare.sh
LOW_WINDOW = 2048       # below the tiles: 1 KiB sm_90 reserves, then the kernels' mbarriers


@pytest.fixture(scope="module")
def kernels(target, tmp_path_factory):
    """name -> (ptxas's module, our module, kernel names)."""
    if target.name != "sm_90":
        pytest.skip("sm_90 kernels")
    from bobc.nvtools import nvdisasm, ptxas
    from bobc.sass.assembler import assemble_listing
    from bobc.sass.cubin import write_cubin
    folder = tmp_path_factory.mktemp("sm90-async")
    built = {}
    for stem, parameter_bytes, threads in (("tma_tile_load", 40, 128), ("hgmma_product", 32, 128)):
        cubin, listing = _ptxas_cubin(stem, folder, ptxas, nvdisasm)
        ours = {}
        for name, assembled in assemble_listing(listing, target, source_name=f"{stem}.lst").items():
            path = folder / f"ours-{name}.cubin"
            path.write_bytes(write_cubin(assembled, name, target, parameter_bytes, threads))
            ours[name] = cp.RawModule(path=str(path))
        built[stem] = (cp.RawModule(path=str(cubin)), ours)
    return built


def _ptxas_cubin(stem: str, folder: Path, ptxas, nvdisasm) -> tuple[Path, str]:
    """ptxas's cubin of the corpus kernel and its nvdisasm -hex listing, from the project's own pinned
    toolchain: tests/gpu/prepare.sh writes both into .device/sm90-async (the corpus's forms are learned
    from that ptxas; another release may choose forms the assembler has not learned: the device
    machine's /usr/local/cuda ptxas writes R2UR with .reuse, a form the corpus never showed).  Without them, this machine's tools."""
    prebuilt = PREBUILT / f"{stem}.cubin"
    if prebuilt.is_file():
        return prebuilt, (PREBUILT / f"{stem}.lst").read_text()
    if ptxas() is None or nvdisasm() is None:
        pytest.fail("run tests/gpu/prepare.sh first (it builds .device/sm90-async with the pinned ptxas), "
                    "or put ptxas and nvdisasm on PATH")
    cubin = folder / f"{stem}.cubin"
    subprocess.run([ptxas(), "-arch=sm_90a", "-O3", str(DATA / f"sm90_{stem}.ptx"), "-o", str(cubin)], check=True)
    listing = subprocess.run([nvdisasm(), "-hex", str(cubin)], check=True, capture_output=True, text=True).stdout
    return cubin, listing


def _arguments(theirs: bool, layout: str, values: tuple) -> tuple:
    """The launch's arguments: ptxas's cubin declares each parameter with its own size (the driver
    copies each argument by the cubin's KPARAM_INFO); ours declares 8-byte words, so its arguments
    are the same parameter bytes (`layout`, struct-packed) cut into 8-byte words."""
    if theirs:
        return tuple(np.uint64(v) if code == "Q" else np.uint32(v) for code, v in zip(layout[1:], values))
    block = struct.pack(layout, *values)
    block += bytes(-len(block) % 8)
    return tuple(np.frombuffer(block, dtype=np.uint64))


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
        arguments = (descriptor.data.ptr, out.data.ptr, 64, 128, 0, nbytes, nbytes)
        kernel((1,), (128,), _arguments(module is theirs, "<QQIIIII", arguments), shared_mem=LOW_WINDOW + nbytes)
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
        arguments = (maps[0].data.ptr, maps[1].data.ptr, d.data.ptr, n, k // 64)
        kernel((n // 128, m // 64, 1), (128,), _arguments(module is theirs, "<QQQII", arguments), shared_mem=shared)
        cp.cuda.Device().synchronize()
        results.append(cp.asnumpy(d))
    reference = cp.asnumpy(cp.matmul(a.astype(cp.float32), b.astype(cp.float32).T))
    error = np.max(np.abs(results[0].astype(np.float32) - reference))
    assert error <= 2e-3 * np.max(np.abs(reference)) + 1e-2, error
    np.testing.assert_array_equal(results[1].view(np.uint16), results[0].view(np.uint16))
