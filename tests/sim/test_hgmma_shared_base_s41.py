"""sm_90 keeps a block's first KiB of shared memory for the system (tests/sim/test_shared_base_s41.py):
a warpgroup MMA (HGMMA) reading an operand from below 0x400 through its descriptor is refused as a
load below it is.  Before: loads, stores, mbarriers and copies below 0x400 were refused, HGMMA's
reads ran.  The addresses are worked by hand from the descriptor layout (PTX ISA, "Matrix
Descriptor Format"): start = descriptor[13:0] << 4, 128-byte swizzle, K-major rows 128 bytes apart;
element (row r, k) at start + (r // 8) 1024 + (r % 8) 128 + 2 k, with bits [6:4] XORed by [9:7]."""
from __future__ import annotations

import numpy as np
import pytest

from bobc.sim.faults import SimulationFault
from bobc.sim.kernel import run_kernel


def _mma(a: int, b: int) -> str:
    """One HGMMA.64x64x16 of a warpgroup, A's matrix at shared `a`, B's at `b` (128-byte swizzle,
    1 KiB strides: the high word 0x40000040, as bobc.sass.generate.gemm_sm90 writes)."""
    return f""".kernel mma
.shared 0x4400
    UMOV UR8, {a >> 4:#x}
    UMOV UR9, 0x40000040
    UMOV UR10, {b >> 4:#x}
    UMOV UR11, 0x40000040
    WARPSYNC.ALL
    [B------:R-:W-:-:S01] WARPGROUP.ARRIVE
    [B------:R-:W-:-:S01] HGMMA.64x64x16.F32 R0, gdesc[UR8], R0, gsb0
    [B------:R-:W-:-:S02] WARPGROUP.DEPBAR.LE gsb0, 0x0
    EXIT
"""


def _run(a: int, b: int, target: str = "sm_90"):
    return run_kernel(_mma(a, b), target, grid=(1,), block=(128,), params=bytes(8),
                      buffers={"out": np.zeros(4, np.uint32)})


def test_operands_from_the_base_run():
    """A's 64 rows fill [0x400, 0x2400), B's [0x2400, 0x4400): all the block's own."""
    _run(0x400, 0x2400)


def test_an_a_matrix_at_0_is_refused_naming_its_descriptor():
    with pytest.raises(SimulationFault) as caught:
        _run(0x0, 0x2400)
    message = caught.value.message
    assert "instruction at 0x0060 (HGMMA.64x64x16.F32 R0, gdesc[UR8], R0, gsb0)" in message, message
    assert "a warpgroup MMA's read of its A matrix (descriptor UR8) at 0x0 (2 bytes) is below 0x400" in message
    assert "address the block's shared memory from 0x400" in message


def test_a_b_matrix_reaching_below_the_base_is_refused_at_its_lowest_byte():
    """B at 0x300: its lowest byte is row 0's k 0, 0x300 with bits [6:4] XOR (0x300 >> 7) & 7 = 6,
    0x360 (row 1 starts at 0x380 ^ 0x70 = 0x3f0; rows 2.. at 0x400 and past)."""
    with pytest.raises(SimulationFault) as caught:
        _run(0x400, 0x300)
    assert "a warpgroup MMA's read of its B matrix (descriptor UR10) at 0x360 (2 bytes) is below 0x400" \
        in caught.value.message, caught.value.message
