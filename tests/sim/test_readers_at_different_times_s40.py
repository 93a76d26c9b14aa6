"""A store ordered after every reader's own read passes even when the readers read at different
times (probe s40 warprace2; bobc.sim.warps).  Kernel: warp 0 produces shared[0], a block barrier
hands it to warps 1 and 2; warp 1 reads it and arrives on barrier 1 (bar.arrive), then warp 2 reads
it and arrives (each read on its own warp-uniform path, so the two reads come at different times);
warp 0 waits on barrier 1 (bar.sync 1, 96 threads) and overwrites shared[0].  PTX ISA ("Memory
Consistency Model", bar.arrive / bar.sync): each consumer's read happens before its arrive, which
happens before the producer's wait completes, so the store races with no read -- the expected
verdict comes from that, not from the simulator.  Before the fix the simulator kept one read time
per byte (the latest, warp 2's) and refused the store because warp 1's arrive came before it."""
from __future__ import annotations

import numpy as np
import pytest

from bobc.sim.faults import WarpsRace
from bobc.sim.kernel import buffer_addresses, run_kernel

from .conftest import above_shared_base

TARGETS = pytest.mark.parametrize("target", ["sm_86", "sm_90"])


def _kernel(producer_wait: str = "@!P1 BAR.SYNC.DEFER_BLOCKING 0x1, 0x60", second: str = "@P2 LDS R4, [RZ]") -> str:
    return f"""
.kernel stages
.shared 256
    S2R R0, SR_TID.X
    ULDC.64 UR4, c[0x0][memory_descriptor]
    ISETP.GE.U32.AND P1, PT, R0, 0x20, PT
    ISETP.GE.U32.AND P2, PT, R0, 0x40, PT
    PLOP3.LUT P3, PT, P1, P2, PT, 0x20, 0x0
    MOV R5, 0x7
    MOV R6, 0x9
    MOV R4, RZ
    @!P1 STS [RZ], R5
    BAR.SYNC.DEFER_BLOCKING 0x0
    @P3 LDS R4, [RZ]
    @P3 BAR.ARV 0x1, 0x60
    {second}
    @P2 BAR.ARV 0x1, 0x60
    {producer_wait}
    @!P1 STS [RZ], R6
    @!P1 LDS R4, [RZ]
    ULDC.64 UR6, c[0x0][param+0x0]
    LEA R10, P0, R0, UR6, 0x2
    IADD3.X R11, RZ, UR7, RZ, P0, !PT
    STG.E [R10.64], R4
    EXIT
"""


def _run(kernel: str, target: str):
    buffers = {"out": np.zeros(96, np.uint32)}
    at = buffer_addresses(buffers)
    return run_kernel(above_shared_base(kernel, target), target, grid=(1,), block=(96,), params=int(at["out"]).to_bytes(8, "little"),
                      buffers=buffers)["out"]


@TARGETS
def test_consumers_reading_at_different_times_then_arriving_order_the_producers_store(target):
    assert list(_run(_kernel(), target)) == [9] * 32 + [7] * 64


def test_without_the_producers_wait_the_store_races_with_both_reads():
    with pytest.raises(WarpsRace) as caught:
        _run(_kernel("NOP"), "sm_86")
    assert "stores to it" in caught.value.message and "STS [RZ], R6" in caught.value.message


def test_a_read_after_the_arrive_still_races():
    """Warp 2 reads again after its arrive: that read is not ordered before the producer's store."""
    second = "@P2 LDS R4, [RZ]\n    @P2 BAR.ARV 0x1, 0x60\n    @P2 LDS R4, [RZ]"
    kernel = _kernel(second=second).replace("    @P2 BAR.ARV 0x1, 0x60\n    @!P1 BAR.SYNC", "    @!P1 BAR.SYNC")
    with pytest.raises(WarpsRace) as caught:
        _run(kernel, "sm_86")
    assert "(warp 2, lane" in caught.value.message and "loads it at 0x00e0" in caught.value.message, caught.value.message
