"""Which warps of a block an acquiring atomic orders (probe s40 warprace3; bobc.sim.races with
bobc.sim.warps' clocks).  PTX ISA, "Memory Consistency Model": an acquire pattern (a strong read --
here thread 0's atomic -- then a fence) orders the accesses of the thread that performs it, and the
accesses of other threads only through what orders them after it (a CTA barrier: bar.sync).  The
mirror of the release rule (test_fence_warps_s40): a grid-wide wait done by thread 0 alone
(`if (tid == 0) { fence; atomicAdd(count); while (atomicAdd(count, 0) < blocks); fence; }`) needs a
__syncthreads() after it before the block's other warps read what the other blocks stored.
Before the fix the simulator let an acquiring atomic order its whole block's later accesses: the
kernel without that barrier passed on both targets."""
from __future__ import annotations

import numpy as np
import pytest

from bobc.sim.faults import BlocksRace
from bobc.sim.kernel import buffer_addresses, run_kernel

TARGETS = pytest.mark.parametrize("target", ["sm_86", "sm_90"])
THREADS = 64          # two warps per block


def _grid_wait_kernel(after: str) -> str:
    """partial[64 cta + tid] = 64 cta + tid + 7; bar.sync; thread 0 fences, adds 1 to the count and
    spins (atomic add of 0) until both blocks have added, then fences; `after`; every thread writes
    out[64 cta + tid] = partial[64 (1 - cta) + tid] (the other block's)."""
    return f"""
.kernel grid_wait
    S2R R0, SR_TID.X
    S2R R1, SR_CTAID.X
    ULDC.64 UR4, c[0x0][memory_descriptor]
    LEA R9, R1, R0, 0x6
    IADD3 R12, R9, 0x7, RZ
    ULDC.64 UR6, c[0x0][param+0x8]
    LEA R10, P0, R9, UR6, 0x2
    IADD3.X R11, RZ, UR7, RZ, P0, !PT
    STG.E [R10.64], R12
    BAR.SYNC.DEFER_BLOCKING 0x0
    ISETP.NE.U32.AND P0, PT, R0, RZ, PT
    ULDC.64 UR8, c[0x0][param+0x10]
    MOV R2, UR8
    MOV R3, UR9
    MOV R5, 0x1
    MOV R6, RZ
    @P0 BRA read
    MEMBAR.ALL.GPU
    ATOMG.E.ADD.STRONG.GPU PT, R4, [R2.64], R5
spin:
    ATOMG.E.ADD.STRONG.GPU PT, R4, [R2.64], R6
    ISETP.LT.U32.AND P1, PT, R4, 0x2, PT
    @P1 BRA spin
    MEMBAR.ALL.GPU
read:
    {after}
    LOP3.LUT R13, R1, 0x1, RZ, 0x3c, !PT
    LEA R14, R13, R0, 0x6
    LEA R14, P0, R14, UR6, 0x2
    IADD3.X R15, RZ, UR7, RZ, P0, !PT
    LDG.E R16, [R14.64]
    ULDC.64 UR10, c[0x0][param+0x0]
    LEA R20, P0, R9, UR10, 0x2
    IADD3.X R21, RZ, UR11, RZ, P0, !PT
    STG.E [R20.64], R16
    EXIT
"""


def _run(kernel: str, target: str):
    buffers = {"out": np.zeros(2 * THREADS, np.uint32), "partial": np.zeros(2 * THREADS, np.uint32),
               "count": np.zeros(1, np.uint32)}
    at = buffer_addresses(buffers)
    params = b"".join(int(at[name]).to_bytes(8, "little") for name in ("out", "partial", "count"))
    return run_kernel(kernel, target, grid=(2,), block=(THREADS,), params=params, buffers=buffers)["out"]


# out[64 b + t] = partial[64 (1 - b) + t] = 64 (1 - b) + t + 7 (hand computation)
EXPECTED = [64 * (1 - b) + t + 7 for b in range(2) for t in range(THREADS)]


@TARGETS
def test_thread_0s_acquire_then_a_barrier_orders_the_whole_blocks_reads(target):
    """The correct grid-wide wait: thread 0's acquire, then bar.sync, then every warp reads."""
    assert list(_run(_grid_wait_kernel("BAR.SYNC.DEFER_BLOCKING 0x0"), target)) == EXPECTED


@TARGETS
def test_thread_0s_acquire_without_a_barrier_orders_only_warp_0s_reads(target):
    """Warp 1's loads are ordered after nothing thread 0 acquired: they race with the other block's
    stores (on a GPU warp 1 may read before the other block has stored)."""
    with pytest.raises(BlocksRace) as caught:
        _run(_grid_wait_kernel("NOP"), target)
    message = caught.value.message
    assert "stores to them at 0x0080 (STG.E" in message, message
    assert "loads them at" in message and "LDG.E R16" in message, message
    # the word raced on is one warp 1 of the other block reads: partial[64 b + t], t >= 32
    address = int(message.split(" at ")[1].split(" ")[0], 16)
    assert (address // 4) % THREADS >= 32, message
