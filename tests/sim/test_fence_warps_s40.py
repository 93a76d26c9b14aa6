"""Which warps' global stores a fence hands over (probe s40 warprace2; bobc.sim.races with
bobc.sim.warps' clocks).  PTX ISA, "Memory Consistency Model": a fence.sc / fence.acq_rel by one
thread orders that thread's own accesses and those ordered before them (by a CTA barrier), not
its block's other threads' -- so a split-K ticket whose stores come from several warps needs a
bar.sync between the stores and thread 0's fence + atomic (ptxas's and Coppelius's pattern).
Before the fix the simulator treated a block as one thread: the stores of every warp counted as
released by thread 0's fence, and the kernel without the barrier passed on both targets."""
from __future__ import annotations

import numpy as np
import pytest

from bobc.sim.faults import BlocksRace
from bobc.sim.kernel import buffer_addresses, run_kernel

from .conftest import above_shared_base

TARGETS = pytest.mark.parametrize("target", ["sm_86", "sm_90"])
THREADS = 64          # two warps per block


def _ticket_kernel(before: str, fence: str = "@!P0 MEMBAR.ALL.GPU") -> str:
    """partial[64 cta + tid] = 64 cta + tid + 7 (every thread of both warps); `before`; thread 0
    `fence`s and draws the ticket (atom.inc, wraps after 1); the block drawing 1 writes
    out[tid] = partial[tid] + partial[64 + tid]."""
    return f"""
.kernel ticket_sum
.shared 4
    S2R R0, SR_TID.X
    S2R R1, SR_CTAID.X
    ULDC.64 UR4, c[0x0][memory_descriptor]
    LEA R9, R1, R0, 0x6
    IADD3 R12, R9, 0x7, RZ
    ULDC.64 UR6, c[0x0][param+0x8]
    LEA R10, P0, R9, UR6, 0x2
    IADD3.X R11, RZ, UR7, RZ, P0, !PT
    STG.E [R10.64], R12
    ISETP.NE.U32.AND P0, PT, R0, RZ, PT
    {before}
    {fence}
    ULDC.64 UR8, c[0x0][param+0x10]
    MOV R2, UR8
    MOV R3, UR9
    MOV R5, 0x1
    MOV R6, RZ
    @!P0 ATOMG.E.INC.STRONG.GPU PT, R4, [R2.64], R5
    @!P0 STS [R6], R4
    BAR.SYNC.DEFER_BLOCKING 0x0
    LDS R4, [R6]
    ISETP.NE.U32.AND P1, PT, R4, R5, PT
    @P1 EXIT
    LEA R14, P0, R0, UR6, 0x2
    IADD3.X R15, RZ, UR7, RZ, P0, !PT
    LDG.E R16, [R14.64]
    LDG.E R17, [R14.64+0x100]
    IADD3 R18, R16, R17, RZ
    ULDC.64 UR10, c[0x0][param+0x0]
    LEA R20, P0, R0, UR10, 0x2
    IADD3.X R21, RZ, UR11, RZ, P0, !PT
    STG.E [R20.64], R18
    EXIT
"""


def _ticket(kernel: str, target: str):
    buffers = {"out": np.zeros(THREADS, np.uint32), "partial": np.zeros(2 * THREADS, np.uint32),
               "ticket": np.zeros(1, np.uint32)}
    at = buffer_addresses(buffers)
    params = b"".join(int(at[name]).to_bytes(8, "little") for name in ("out", "partial", "ticket"))
    return run_kernel(above_shared_base(kernel, target), target, grid=(2,), block=(THREADS,), params=params, buffers=buffers)["out"]


EXPECTED = [(t + 7) + (64 + t + 7) for t in range(THREADS)]


@TARGETS
def test_thread_0s_fence_without_a_barrier_hands_over_only_warp_0s_stores(target):
    """Warp 1's stores are ordered before nothing thread 0 does: the last block's load of them
    races (warp 0's words alone would be fine)."""
    with pytest.raises(BlocksRace) as caught:
        _ticket(_ticket_kernel("NOP"), target)
    message = caught.value.message
    assert "stores to them at 0x0080 (STG.E" in message and "R12)" in message, message
    assert "loads them at 0x01" in message and "LDG.E R1" in message, message
    # the word raced on is one warp 1 of the storing block wrote: partial[64 b + t], t >= 32
    address = int(message.split(" at ")[1].split(" ")[0], 16)
    assert (address // 4) % THREADS >= 32, message


@TARGETS
def test_a_barrier_then_thread_0s_fence_hands_over_the_whole_block(target):
    """Coppelius's split-K pattern: the stores, bar.sync, thread 0's fence and ticket."""
    assert list(_ticket(_ticket_kernel("BAR.SYNC.DEFER_BLOCKING 0x0"), target)) == EXPECTED


@TARGETS
def test_every_thread_fencing_then_a_barrier_then_thread_0s_ticket_hands_over_the_whole_block(target):
    """Coppelius's split-K kernels: every thread's stores, its own MEMBAR.ALL.GPU, a bar.sync, then
    thread 0's ticket -- each warp's fence is ordered before the atomic (a fence makes the thread's
    earlier stores visible at .gpu scope before the barrier lets thread 0 go on)."""
    kernel = _ticket_kernel("MEMBAR.ALL.GPU\n    BAR.SYNC.DEFER_BLOCKING 0x0", "NOP")
    assert list(_ticket(kernel, target)) == EXPECTED


def test_every_thread_fencing_hands_over_its_own_stores():
    """Each thread's fence orders its own stores; thread 0's atomic releases only warp 0's (its own
    fence's), so without a barrier warp 1's stores still race."""
    assert list(_ticket(_ticket_kernel("BAR.SYNC.DEFER_BLOCKING 0x0", "MEMBAR.ALL.GPU"), "sm_86")) == EXPECTED
    with pytest.raises(BlocksRace):
        _ticket(_ticket_kernel("NOP", "MEMBAR.ALL.GPU"), "sm_86")


def test_a_barrier_after_the_fence_is_too_late():
    """The fence must follow the barrier: ordering warp 1's stores before thread 0 only after the
    fence releases nothing of them."""
    kernel = _ticket_kernel("NOP", "@!P0 MEMBAR.ALL.GPU\n    BAR.SYNC.DEFER_BLOCKING 0x0")
    with pytest.raises(BlocksRace):
        _ticket(kernel, "sm_86")
