"""A SHFL whose lane reads a lane that does not execute it (probe s46 kernelauthor2, finding 1).

PTX shfl.sync leaves the value undefined when the source thread is inactive or not in membermask
(PTX ISA, shfl.sync; NVIDIA's CUDA C++ guidelines: "If the source thread for a shuffle sync
operation is not present the result of the instruction is undefined").  The simulator read the
absent lane's register as it was, so a kernel whose lanes diverged around a shuffle passed here
and would read garbage on a GPU.  Such a read is refused, naming both lanes; a shuffle whose
lanes read only executing lanes (or their own value, out of range) runs as before."""
import numpy as np
import pytest

from bobc.sim.faults import SimulationFault
from bobc.sim.kernel import Pointer, run_kernel

TARGETS = pytest.mark.parametrize("target", ["sm_86", "sm_90"])


def _kernel(before_shuffle: str, lane_mask: int, distance: int) -> str:
    """out[t] = in[t] + in[t ^ distance] (SHFL.BFLY), lanes with bit `lane_mask` set skip the shuffle first
    when `before_shuffle` branches them past it."""
    return f""".kernel k
    S2R R0, SR_TID.X
    ULDC.64 UR4, c[0x0][memory_descriptor]
    LDC.64 R2, c[0x0][RZ+param+0x0]
    LDC.64 R4, c[0x0][RZ+param+0x8]
    IMAD.WIDE.U32 R2, R0, 0x4, R2
    IMAD.WIDE.U32 R4, R0, 0x4, R4
    LDG.E R6, [R2.64]
    MOV R7, RZ
    LOP3.LUT P0, RZ, R0, {lane_mask:#x}, RZ, 0xc0, !PT
{before_shuffle}
    SHFL.BFLY PT, R7, R6, {distance:#x}, 0x1f
skip:
    FADD R8, R6, R7
    STG.E [R4.64], R8
    EXIT
"""


def _run(source, target, threads):
    x = np.arange(1, threads + 1, dtype=np.float32) * 3
    out = run_kernel(source, target, grid=1, block=threads, params=[Pointer("x"), Pointer("y")],
                     buffers={"x": x, "y": np.zeros(threads, np.float32)}, check_hazards=False)
    return x, out["y"]


@TARGETS
def test_a_shuffle_from_a_lane_that_branched_past_it_is_refused_s46(target):
    # lanes 16..31 (bit 0x10) branch past the shuffle; lanes 0..15 read lanes 16..31 through BFLY 0x10
    source = _kernel("    @P0 BRA skip", 0x10, 0x10)
    with pytest.raises(SimulationFault) as caught:
        _run(source, target, 32)
    fault = caught.value
    assert "reads R6 of lane 16, which does not execute this SHFL" in fault.message
    assert "thread (0, 0, 0) of block (0, 0, 0) (warp 0, lane 0)" in fault.message
    assert "shfl.sync" in fault.message and "undefined" in fault.message
    assert fault.span.line == 12 and "converge" in fault.hint


@TARGETS
def test_a_shuffle_from_a_lane_past_a_partial_warp_is_refused_s46(target):
    # a block of 16 threads: lanes 16..31 of its warp are no threads at all
    with pytest.raises(SimulationFault) as caught:
        _run(_kernel("", 0x10, 0x10), target, 16)
    assert "reads R6 of lane 16, which does not execute this SHFL" in caught.value.message


@TARGETS
def test_shuffles_among_executing_lanes_still_run_s46(target):
    # lanes 16..31 skip, lanes 0..15 exchange among themselves (BFLY 0x8): each reads an executing lane
    x, y = _run(_kernel("    @P0 BRA skip", 0x10, 0x8), target, 32)
    lanes = np.arange(32)
    expected = np.where(lanes < 16, x + x[lanes ^ 8], x)       # skipped lanes add R7 = 0
    assert (y == expected.astype(np.float32)).all()
    # a partial warp's lanes reading within it, and the whole warp converged
    x, y = _run(_kernel("", 0x10, 0x4), target, 16)
    assert (y == x + x[np.arange(16) ^ 4]).all()
    x, y = _run(_kernel("", 0x10, 0x10), target, 32)
    assert (y == x + x[np.arange(32) ^ 16]).all()
