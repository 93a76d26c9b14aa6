"""A WarpsRace on a store names the reader it races with, not the latest reader (probe s40
warprace3; bobc.sim.warps).  Kernel: warp 0 stores shared[0], a block barrier hands it to warps 1
and 2; both read it; only warp 2 arrives on barrier 1 (bar.arrive 1, 64) and warp 0 waits on it
(bar.sync 1, 64), then overwrites shared[0].  PTX ISA ("Memory Consistency Model", bar.arrive /
bar.sync): warp 2's read happens before the store, warp 1's read is ordered before nothing warp 0
does -- so the store races with WARP 1's read, whatever order the reads came in.  Before the fix
the message named the byte's latest reader (warp 2, ordered)."""
from __future__ import annotations

import numpy as np
import pytest

from bobc.sim.faults import WarpsRace
from bobc.sim.kernel import buffer_addresses, run_kernel

from .conftest import above_shared_base

TARGETS = pytest.mark.parametrize("target", ["sm_86", "sm_90"])


def _kernel(reads: str) -> str:
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
    {reads}
    @P2 BAR.ARV 0x1, 0x40
    @!P1 BAR.SYNC.DEFER_BLOCKING 0x1, 0x40
    @!P1 STS [RZ], R6
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
def test_readers_at_different_times_the_earlier_one_races(target):
    """Warp 1 reads first, warps 0 and 2 meet at barrier 2 (the time moves on), warp 2 reads: the
    store races with warp 1's read (at 0x00a0), the earlier one."""
    reads = "@P3 LDS R4, [RZ]\n    @!P3 BAR.SYNC.DEFER_BLOCKING 0x2, 0x40\n    @P2 LDS R4, [RZ]"
    with pytest.raises(WarpsRace) as caught:
        _run(_kernel(reads), target)
    message = caught.value.message
    assert "(warp 1, lane" in message and "loads it at 0x00a0 (@P" in message, message
    assert "(warp 2," not in message, message


@TARGETS
def test_readers_in_one_instruction_the_unordered_one_races(target):
    """Warps 1 and 2 read in one instruction (at 0x00a0): the store races with warp 1's read."""
    with pytest.raises(WarpsRace) as caught:
        _run(_kernel("@P1 LDS R4, [RZ]"), target)
    message = caught.value.message
    assert "(warp 1, lane" in message and "loads it at 0x00a0 (@P" in message, message
    assert "(warp 2," not in message, message


def test_with_every_reader_arriving_the_store_is_ordered():
    """Both readers arrive (bar.arrive 1, 96; warp 0 waits for 96): no race, the hand-computed
    values: warp 0 reads its own 9 (it stored last), warps 1 and 2 read 7."""
    kernel = _kernel("@P1 LDS R4, [RZ]").replace("@P2 BAR.ARV 0x1, 0x40", "@P1 BAR.ARV 0x1, 0x60") \
        .replace("BAR.SYNC.DEFER_BLOCKING 0x1, 0x40", "BAR.SYNC.DEFER_BLOCKING 0x1, 0x60") \
        .replace("@!P1 STS [RZ], R6", "@!P1 STS [RZ], R6\n    @!P1 LDS R4, [RZ]")
    assert list(_run(kernel, "sm_86")) == [9] * 32 + [7] * 64
