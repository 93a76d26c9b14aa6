"""A SHFL whose source lane is live but was parted from the reader by a branch that nothing closed
(probe s46 newuser11): the simulator ran lowest program counter first, so the reading lanes got
whatever the source lane's register held by then, and `bobc sim` said nothing -- the GPU gives an
undefined value there (the PTX ISA, shfl.sync: a source lane outside the executing lanes).  A new
user's warp reduction written without ridge's BSSY / BSYNC passed the simulator.  Now it is refused
at the SHFL; the same exchange after a BSYNC that closes the branch runs, and gives the values worked
out by hand below."""
from __future__ import annotations

import numpy as np
import pytest

from bobc.sim.kernel import Pointer, run_kernel
from bobc.sim.executor import SimulationFault

HEAD = """//@ block 32
//@ param 0 pointer write 128 out
.kernel k
.registers 16
    S2R R0, SR_TID.X
    ULDC.64 UR4, c[0x0][memory_descriptor]
    LDC.64 R2, c[0x0][RZ+param+0x0]
    I2FP.F32.U32 R4, R0
    ISETP.LT.U32.AND P0, PT, R0, 0x10, PT
"""
TAIL = """    IMAD.WIDE.U32 R2, R0, 0x4, R2
    STG.E [R2.64], R4
    EXIT
done:
    BRA done
"""
# lanes 16..31 shuffle on one path, lanes 0..15 on another: each reads lane + 16, parted from it
PARTED = HEAD + """    @P0 BRA low
    SHFL.DOWN PT, R5, R4, 0x10, 0x1f
    FADD R4, R4, R5
    BRA join
low:
    SHFL.DOWN PT, R5, R4, 0x10, 0x1f
    FADD R4, R4, R5
join:
""" + TAIL
# lanes 16..31 double their value on a branch that BSYNC closes; then all 32 shuffle together
CLOSED = HEAD + """    BSSY B0, join
    @P0 BRA join
    FADD R4, R4, R4
join:
    BSYNC B0
    SHFL.DOWN PT, R5, R4, 0x10, 0x1f
    FADD R4, R4, R5
""" + TAIL


def _run(source, arch):
    return run_kernel(source, arch, grid=(1, 1, 1), block=(32, 1, 1), params=[Pointer("out")],
                      buffers={"out": np.zeros(32, np.float32)})["out"]


@pytest.mark.parametrize("arch", ["sm_86", "sm_90"])
def test_a_shuffle_reading_a_parted_lane_is_refused_s46(arch):
    # the refusal is the one for every absent source lane (probe s46 kernelauthor2's, which this probe's met)
    with pytest.raises(SimulationFault, match=r"SHFL\.DOWN PT, R5, R4, 0x10, 0x1f\): .* reads R4 of lane \d+, which "
                                              r"does not execute this SHFL \(a branch sent it elsewhere"):
        _run(PARTED, arch)


@pytest.mark.parametrize("arch", ["sm_86", "sm_90"])
def test_the_same_shuffle_after_the_bsync_runs_s46(arch):
    lane = np.arange(32)
    value = np.where(lane < 16, lane, 2 * lane)                      # lanes 16..31 doubled
    # lane l < 16 adds lane l + 16's value; past the clamp (l + 16 > 31) a lane reads its own
    expected = np.where(lane < 16, value + value[np.minimum(lane + 16, 31)], 2 * value).astype(np.float32)
    assert (_run(CLOSED, arch) == expected).all()
