"""Where a TMA copy may land in shared memory (probe s40 mutants4).  By hand from docs/tensor-maps.md
"How a copy lands": under the 128-byte swizzle a box of 32 rows of 32 binary16 (64-byte rows) takes
each row's whole 128-byte span, 32 x 128 = 4096 bytes of shared memory (not the box's 2048 bytes);
at shared 0x400 it needs 0x400 + 4096 = 5120 bytes -- exactly 5120 fits, 4096 does not (the mbarrier
sits in 8 bytes past them) -- and its
destination must be 128-byte aligned (CUDA C++ Programming Guide, "Using TMA to transfer
multi-dimensional arrays": the shared memory address must be 128-byte aligned), so 0x440 is refused."""
from __future__ import annotations

import numpy as np
import pytest

from bobc.nvidia.tensor_map import TiledTensor, encode_tiled
from bobc.sim.faults import SimulationFault
from bobc.sim.kernel import buffer_addresses, run_kernel
from tests.sim.test_tma_swizzle_rows_s39 import KERNEL


def _copy(shared: int, destination: int = 0x400):
    shape, box = (64, 256), (32, 32)
    host = np.arange(shape[0] * shape[1], dtype=np.float16).reshape(shape)
    buffers = {"tensor": host.reshape(-1).view(np.uint8).copy(), "map": np.zeros(128, np.uint8),
               "out": np.zeros(4096, np.uint8)}
    at = buffer_addresses(buffers)
    buffers["map"][:] = np.frombuffer(encode_tiled(TiledTensor("float16", at["tensor"], shape[::-1], (shape[1] * 2,),
                                                               box, swizzle="128b")), np.uint8)
    # the mbarrier sits in the 8 bytes past the room (KERNEL keeps it at 0x10400: sm_90's first KiB is the system's)
    kernel = (KERNEL.replace(".shared 66568", f".shared {shared + 8}").replace("UMOV UR8, 0x400", f"UMOV UR8, {destination:#x}")
              .replace("0x10400", f"{shared:#x}"))
    params = ["map", "out", np.int32(0), np.int32(0), np.uint32(2048), np.uint32(128)]
    return run_kernel(kernel, "sm_90", (1, 1, 1), (32, 1, 1), params, buffers, shared_bytes=shared + 8, check_hazards=False)


def test_a_copy_whose_spans_end_at_the_end_of_shared_memory_runs():
    _copy(5120)


def test_a_copy_whose_spans_pass_the_end_of_shared_memory_is_refused():
    with pytest.raises(SimulationFault) as refused:
        _copy(4096)
    assert "a copy of 2048 bytes (4096 bytes of shared memory) to shared 0x400" in refused.value.message, refused.value.message


def test_a_copy_to_a_destination_not_128_byte_aligned_is_refused():
    with pytest.raises(SimulationFault) as refused:
        _copy(66560, 0x440)
    assert "to shared 0x440 (128-byte aligned" in refused.value.message, refused.value.message
