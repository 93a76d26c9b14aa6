"""bobc's tensor maps on the H200: the driver writes the same bytes, and TMA copies by them.

For each case, bobc.nvidia.tensor_map encodes a descriptor; the CUDA driver on this machine
encodes the same parameters (cuTensorMapEncodeTiled, through ctypes) and must write the same 128
bytes; then a ptxas-compiled kernel (tools/ptx_corpus/sm90_tma_tile_load.ptx) copies one tile by OUR
descriptor, placed in global memory as bobc places them, and the bytes that land in shared memory
must equal this file's model of a tiled copy: the box's elements row by row (dimension 0
innermost), zero where a coordinate falls outside the tensor; with a swizzle, every row takes the
swizzle's whole span (a 64-byte row under the 128-byte swizzle leaves 64 bytes unwritten) and its
16-byte chunks move by the swizzle (address bits 4.. XOR bits 7.., 1/2/3 bits for the 32/64/128-
byte swizzles) -- the layout the warpgroup MMA descriptors will be written against.  Nothing
else in the zeroed room after it may change.  Not covered: element strides other than 1 (a copy
with element stride 2 along dimension 0 never completed its barrier on the H200: the transaction
count it delivers is not the driver's box bytes; bobc encodes them as the driver does, but no
kernel of ours uses them).

Set TMA_DUMP=DIR to keep each case's landed bytes and model (npz) for a failing case.
"""
from __future__ import annotations

import ctypes
import os
import subprocess
from pathlib import Path

import numpy as np
import pytest

from bobc.nvidia import tensor_map
from bobc.nvidia.tensor_map import TiledTensor, encode_tiled

pytestmark = pytest.mark.gpu

cp = pytest.importorskip("cupy")
PTX = Path(__file__).resolve().parents[2] / "tools" / "ptx_corpus" / "sm90_tma_tile_load.ptx"

CASES = {
    # name: (tensor shape, outermost first; element type; box; element strides; swizzle; start)
    "f16-128b": ((256, 768), "float16", (64, 128), None, "128b", (64, 128)),
    "f16-128b-edge": ((256, 768), "float16", (64, 128), None, "128b", (736, 200)),
    "f16-none": ((256, 768), "float16", (32, 16), None, "none", (8, 3)),
    "f16-none-negative": ((256, 768), "float16", (32, 8), None, "none", (-16, -4)),
    "f16-64b": ((256, 768), "float16", (32, 64), None, "64b", (96, 17)),
    "f16-32b": ((256, 768), "float16", (16, 64), None, "32b", (48, 5)),
    "f16-128b-short-rows": ((256, 768), "float16", (32, 32), None, "128b", (0, 0)),
    "f32-128b-3d": ((7, 50, 100), "float32", (32, 8, 4), None, "128b", (64, 40, 5)),
}
NUMPY = {"float16": np.float16, "float32": np.float32}


def driver_encode(t: TiledTensor) -> bytes:
    """What this machine's CUDA driver writes for `t` (CuPy has made its context current)."""
    cuda = ctypes.CDLL("libcuda.so.1")
    fn = cuda.cuTensorMapEncodeTiled
    fn.restype = ctypes.c_int
    fn.argtypes = [ctypes.c_void_p, ctypes.c_int, ctypes.c_uint32, ctypes.c_void_p, ctypes.c_void_p,
                   ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int, ctypes.c_int,
                   ctypes.c_int, ctypes.c_int]
    enum = {"float16": 6, "float32": 7}[t.data_type]   # CUtensorMapDataType (cuda.h)
    out = (ctypes.c_uint8 * 128)()
    rank = t.rank
    rc = fn(out, enum, rank, ctypes.c_void_p(t.address), (ctypes.c_uint64 * rank)(*t.dims),
            (ctypes.c_uint64 * max(1, rank - 1))(*t.strides), (ctypes.c_uint32 * rank)(*t.box),
            (ctypes.c_uint32 * rank)(*t.steps()), tensor_map.INTERLEAVES[t.interleave],
            tensor_map.SWIZZLES[t.swizzle], tensor_map.L2_PROMOTIONS[t.l2_promotion],
            tensor_map.OOB_FILLS[t.oob_fill])
    assert rc == 0, f"driver refused {t}: CUresult {rc}"
    return bytes(out)


def model(tensor: np.ndarray, t: TiledTensor, start, base: int) -> bytes:
    """The bytes a tiled copy of `t` at `start` (dimension 0 first) leaves at shared address `base`
    (unwritten bytes, where rows are shorter than the swizzle's span, are zero)."""
    counts = [b // s for b, s in zip(t.box, t.steps())]
    out = np.zeros(counts[::-1], dtype=tensor.dtype)
    for index in np.ndindex(*out.shape):
        coords = [start[d] + index[len(counts) - 1 - d] * t.steps()[d] for d in range(len(counts))]
        if all(0 <= c < n for c, n in zip(coords, t.dims)):
            out[index] = tensor[tuple(coords[::-1])]
    raw = out.tobytes()
    span = tensor_map.SWIZZLE_BYTES[t.swizzle]
    if span is None:
        return raw
    row = counts[0] * tensor.itemsize
    bits = span.bit_length() - 5                 # 32 -> 1, 64 -> 2, 128 -> 3
    landed = bytearray(len(raw) // row * span)
    for offset in range(0, len(raw), 16):
        address = base + offset // row * span + offset % row
        moved = address ^ (((address >> 7) & ((1 << bits) - 1)) << 4)
        landed[moved - base: moved - base + 16] = raw[offset: offset + 16]
    return bytes(landed)


@pytest.fixture(scope="module")
def kernels(tmp_path_factory):
    from bobc.nvtools import ptxas
    tool = ptxas()
    if tool is None:
        pytest.fail("ptxas not found (the device machine has it in /usr/local/cuda/bin)")
    cubin = tmp_path_factory.mktemp("tma") / "tma_tile_load.cubin"
    subprocess.run([tool, "-arch=sm_90", "-O3", str(PTX), "-o", str(cubin)], check=True)
    module = cp.RawModule(path=str(cubin))
    return {2: module.get_function("tma_tile_load_2d"), 3: module.get_function("tma_tile_load_3d")}


@pytest.mark.parametrize("name", sorted(CASES))
def test_tma_copies_by_bobcs_descriptor(name, kernels, target):
    if target.name != "sm_90":
        pytest.skip("tensor maps are an sm_90 feature")
    shape, dtype, box, steps, swizzle, start = CASES[name]
    rng = np.random.default_rng(len(name))
    rows = int(np.prod(shape[:-1]))
    pitch = -(-shape[-1] * np.dtype(NUMPY[dtype]).itemsize // 64) * 64 + 64   # padded rows
    backing = cp.zeros(rows * pitch + 1024, dtype=cp.uint8)
    host = (rng.standard_normal(shape) * 4).astype(NUMPY[dtype])
    padded = np.zeros((rows, pitch), dtype=np.uint8)
    padded[:, : shape[-1] * host.itemsize] = host.reshape(rows, shape[-1]).view(np.uint8)
    backing[: rows * pitch] = cp.asarray(padded.reshape(-1))
    dims = tuple(shape[::-1])
    strides = tuple(pitch * int(np.prod(shape[len(shape) - d:-1], dtype=np.int64)) for d in range(1, len(dims)))
    t = TiledTensor(data_type=dtype, address=int(backing.data.ptr), dims=dims, strides=strides, box=box,
                    element_strides=steps, swizzle=swizzle)
    ours = encode_tiled(t, context=name)
    assert ours == driver_encode(t), "bobc's descriptor differs from this driver's"

    descriptor = cp.asarray(np.frombuffer(ours, dtype=np.uint8))
    assert int(descriptor.data.ptr) % tensor_map.ALIGNMENT == 0
    nbytes = t.box_bytes()
    copied = 2 * nbytes          # twice the box, zeroed first: a copy that lands in more room shows it
    out = cp.zeros(copied + 16, dtype=cp.uint8)
    coords = [np.uint32(c & 0xFFFFFFFF) for c in start] + [np.uint32(0)] * (3 - len(start))
    kernels[len(dims)]((1,), (128,), (np.uint64(descriptor.data.ptr), np.uint64(out.data.ptr), *coords,
                                      np.uint32(nbytes), np.uint32(copied)), shared_mem=copied + 1024)
    cp.cuda.Device().synchronize()
    got = cp.asnumpy(out)
    base = int(got[copied: copied + 4].view(np.uint32)[0])
    expected = model(host, t, start, base)
    assert len(expected) <= copied
    if got[: len(expected)].tobytes() != expected and os.environ.get("TMA_DUMP"):
        folder = Path(os.environ["TMA_DUMP"])
        folder.mkdir(parents=True, exist_ok=True)
        np.savez(folder / f"{name}.npz", got=got[:copied], expected=np.frombuffer(expected, np.uint8),
                 host=host, base=base)
    landed = got[: len(expected)].tobytes()
    assert landed == expected, f"{name}: the tile landed differently (base {base:#x})"
    assert not got[len(expected):copied].any(), f"{name}: the copy wrote past its box"
