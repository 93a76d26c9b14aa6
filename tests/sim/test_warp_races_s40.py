"""Races within a block (probe s40 warprace; bobc.sim.warps): two warps of one block touching one
shared byte, one storing, with no synchronization of the block between them, are refused naming
both warps' threads and instructions and the byte.  The expected verdicts come from the PTX memory
model (PTX ISA, "Memory Consistency Model": bar.sync orders its participants, bar.arrive releases
without waiting, atomics never race) -- on a GPU warps are scheduled in any order, while the
simulator's lock-step order gave the 'right' value and hid the race (before: the kernel without a
barrier passed on both targets with out[0] == 32)."""
from __future__ import annotations

import numpy as np
import pytest

from bobc.sim.faults import WarpsRace
from bobc.sim.kernel import buffer_addresses, run_kernel

from .conftest import above_shared_base, shared_base

TARGETS = pytest.mark.parametrize("target", ["sm_86", "sm_90"])


def _swap_kernel(between: str, load: str = "LDS R4, [R3]") -> str:
    """Thread t stores t at shared[4t]; `between`; it loads shared[4 (t ^ 32)] (the other warp's
    word) into out[t]."""
    return f"""
.kernel swap
.shared 256
    S2R R0, SR_TID.X
    ULDC.64 UR4, c[0x0][memory_descriptor]
    SHF.L.U32 R1, R0, 0x2, RZ
    STS [R1], R0
    {between}
    LOP3.LUT R2, R0, 0x20, RZ, 0x3c, !PT
    SHF.L.U32 R3, R2, 0x2, RZ
    {load}
    ULDC.64 UR6, c[0x0][param+0x0]
    LEA R10, P0, R0, UR6, 0x2
    IADD3.X R11, RZ, UR7, RZ, P0, !PT
    STG.E [R10.64], R4
    EXIT
"""


def _run(kernel: str, target: str, threads: int = 64):
    buffers = {"out": np.zeros(threads, np.uint32)}
    at = buffer_addresses(buffers)
    return run_kernel(above_shared_base(kernel, target), target, grid=(1,), block=(threads,), params=int(at["out"]).to_bytes(8, "little"),
                      buffers=buffers)["out"]


@TARGETS
def test_a_load_of_another_warps_store_without_a_barrier_races(target):
    with pytest.raises(WarpsRace) as caught:
        _run(_swap_kernel("NOP"), target)
    message = caught.value.message
    base = shared_base(target)          # the kernel's words start past sm_90's system KiB (above_shared_base)
    at = f"+{base:#x}" if base else ""
    assert f"warps of block (0, 0, 0) race on shared byte {0x80 + base:#x}" in message, message
    assert (f"thread (32, 0, 0) of block (0, 0, 0) (warp 1, lane 0) stores to it at 0x0030 (STS [R1{at}], R0)"
            in message), message
    assert f"thread (0, 0, 0) of block (0, 0, 0) (warp 0, lane 0) loads it at 0x0070 (LDS R4, [R3{at}])" in message, message
    assert "BAR.SYNC" in caught.value.hint


@TARGETS
def test_a_barrier_between_orders_them(target):
    out = _run(_swap_kernel("BAR.SYNC.DEFER_BLOCKING 0x0"), target)
    assert list(out) == [t ^ 32 for t in range(64)]


def test_a_store_after_another_warps_load_without_a_barrier_races():
    """Write after read: warp 1's second store overwrites a word warp 0 loaded, unordered."""
    with pytest.raises(WarpsRace) as caught:
        _run(_swap_kernel("BAR.SYNC.DEFER_BLOCKING 0x0", "LDS R4, [R3]\n    STS [R1], RZ"), "sm_86")
    assert "loads it at 0x0070" in caught.value.message and "stores to it at 0x0080 (STS [R1], RZ)" in caught.value.message


def _producer_kernel(consumer: str) -> str:
    """Warp 1 stores 7 at shared[0] and arrives at barrier 1 (BAR.ARV, 64 threads); warp 0 takes
    barrier 1 as `consumer` and loads shared[0] into out[tid]."""
    return f"""
.kernel producer
.shared 256
    S2R R0, SR_TID.X
    ULDC.64 UR4, c[0x0][memory_descriptor]
    ISETP.GE.U32.AND P0, PT, R0, 0x20, PT
    MOV R5, 0x7
    @P0 STS [RZ], R5
    @P0 BAR.ARV 0x1, 0x40
    @!P0 {consumer} 0x1, 0x40
    @!P0 LDS R4, [RZ]
    @P0 MOV R4, RZ
    ULDC.64 UR6, c[0x0][param+0x0]
    LEA R10, P1, R0, UR6, 0x2
    IADD3.X R11, RZ, UR7, RZ, P1, !PT
    STG.E [R10.64], R4
    EXIT
"""


@TARGETS
def test_an_arrive_then_a_named_barrier_orders_the_producer_before_the_consumer(target):
    out = _run(_producer_kernel("BAR.SYNC.DEFER_BLOCKING"), target)
    assert list(out) == [7] * 32 + [0] * 32


def test_an_arrive_on_both_sides_orders_nothing():
    """bar.arrive releases but does not wait: the consumer's load is unordered with the store."""
    with pytest.raises(WarpsRace):
        _run(_producer_kernel("BAR.ARV"), "sm_86")


def test_shared_atomics_of_two_warps_do_not_race():
    kernel = """
.kernel count
.shared 256
    S2R R0, SR_TID.X
    ULDC.64 UR4, c[0x0][memory_descriptor]
    ISETP.NE.U32.AND P0, PT, R0, RZ, PT
    @!P0 STS [RZ], RZ
    BAR.SYNC.DEFER_BLOCKING 0x0
    MOV R5, 0x1
    ATOMS.ADD R6, [RZ], R5
    BAR.SYNC.DEFER_BLOCKING 0x0
    LDS R4, [RZ]
    ULDC.64 UR6, c[0x0][param+0x0]
    LEA R10, P1, R0, UR6, 0x2
    IADD3.X R11, RZ, UR7, RZ, P1, !PT
    STG.E [R10.64], R4
    EXIT
"""
    assert list(_run(kernel, "sm_86")) == [64] * 64


def test_every_thread_storing_one_word_races():
    """Threads of different warps storing to one word in one instruction: the GPU keeps either."""
    kernel = _swap_kernel("NOP").replace("STS [R1], R0", "STS [RZ], R0")
    with pytest.raises(WarpsRace) as caught:
        _run(kernel, "sm_86")
    assert "race on shared byte 0x0" in caught.value.message
