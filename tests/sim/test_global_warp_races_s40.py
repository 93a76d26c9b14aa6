"""Two warps of one block on global memory (probe s40 warprace3; bobc.sim.races with bobc.sim.warps'
clocks).  PTX ISA, "Memory Consistency Model": threads of one CTA are ordered only by
synchronization (bar.sync, an mbarrier), whatever the state space -- so warp 0 loading a global
word warp 1 stored, with no barrier between, is a data race (CUDA's compute-sanitizer racecheck
calls the same of shared memory; the model does not tell the state spaces apart).  Kernel: thread t
stores t + 7 to out[t]; `between`; thread t loads out[t ^ 32] (the other warp's word) into
back[t].  With a bar.sync between, back[t] = (t ^ 32) + 7 (hand computation).  Before the fix the
simulator did not judge two warps of one block on global memory: the kernel with no barrier gave
the barriered kernel's answer on both targets, one block or two."""
from __future__ import annotations

import numpy as np
import pytest

from bobc.sim.faults import WarpsRace
from bobc.sim.kernel import buffer_addresses, run_kernel

TARGETS = pytest.mark.parametrize("target", ["sm_86", "sm_90"])
THREADS = 64          # two warps per block


def _swap_kernel(between: str) -> str:
    return f"""
.kernel global_swap
    S2R R0, SR_TID.X
    S2R R1, SR_CTAID.X
    ULDC.64 UR4, c[0x0][memory_descriptor]
    LEA R9, R1, R0, 0x6
    IADD3 R12, R0, 0x7, RZ
    ULDC.64 UR6, c[0x0][param+0x0]
    LEA R10, P0, R9, UR6, 0x2
    IADD3.X R11, RZ, UR7, RZ, P0, !PT
    STG.E [R10.64], R12
    {between}
    LOP3.LUT R13, R0, 0x20, RZ, 0x3c, !PT
    LEA R14, R1, R13, 0x6
    LEA R14, P0, R14, UR6, 0x2
    IADD3.X R15, RZ, UR7, RZ, P0, !PT
    LDG.E R16, [R14.64]
    ULDC.64 UR8, c[0x0][param+0x8]
    LEA R20, P0, R9, UR8, 0x2
    IADD3.X R21, RZ, UR9, RZ, P0, !PT
    STG.E [R20.64], R16
    EXIT
"""


def _run(kernel: str, target: str, blocks: int = 1):
    buffers = {"out": np.zeros(blocks * THREADS, np.uint32), "back": np.zeros(blocks * THREADS, np.uint32)}
    at = buffer_addresses(buffers)
    params = b"".join(int(at[name]).to_bytes(8, "little") for name in ("out", "back"))
    return run_kernel(kernel, target, grid=(blocks,), block=(THREADS,), params=params, buffers=buffers)["back"]


def _expected(blocks: int):
    return [(t ^ 32) + 7 for _ in range(blocks) for t in range(THREADS)]


@TARGETS
@pytest.mark.parametrize("blocks", [1, 2])
def test_a_barrier_orders_the_other_warps_global_store(target, blocks):
    assert list(_run(_swap_kernel("BAR.SYNC.DEFER_BLOCKING 0x0"), target, blocks)) == _expected(blocks)


@TARGETS
@pytest.mark.parametrize("blocks", [1, 2])
def test_no_barrier_two_warps_race_on_a_global_word(target, blocks):
    with pytest.raises(WarpsRace) as caught:
        _run(_swap_kernel("NOP"), target, blocks)
    message = caught.value.message
    assert "global_swap: warps of block (0, 0, 0) race on 4 bytes at" in message, message
    assert "(in out, 0 bytes in): warp 0 stores to them at 0x0080 (STG.E" in message, message
    assert "then warp 1 loads them at 0x00e0 (LDG.E R16" in message, message


def test_a_warps_own_word_is_no_race():
    """Each thread loads its own word back (t, not t ^ 32): one warp, program order."""
    kernel = _swap_kernel("NOP").replace("LOP3.LUT R13, R0, 0x20, RZ, 0x3c, !PT", "MOV R13, R0")
    assert list(_run(kernel, "sm_86")) == [t + 7 for t in range(THREADS)]


def test_a_named_barrier_of_other_warps_orders_nothing_between_these_two():
    """The barrier warp 0 and warp 1 both take part in orders them; with 4 warps, a bar.sync 1, 64 of
    warps 0 and 1 alone orders warps 0 and 1 but not warps 2 and 3 (thread t reads t ^ 32)."""
    buffers = {"out": np.zeros(128, np.uint32), "back": np.zeros(128, np.uint32)}
    at = buffer_addresses(buffers)
    params = b"".join(int(at[name]).to_bytes(8, "little") for name in ("out", "back"))
    kernel = _swap_kernel("ISETP.LT.U32.AND P1, PT, R0, 0x40, PT\n    @P1 BAR.SYNC.DEFER_BLOCKING 0x1, 0x40")
    kernel = kernel.replace("LEA R9, R1, R0, 0x6", "LEA R9, R1, R0, 0x7").replace("LEA R14, R1, R13, 0x6", "LEA R14, R1, R13, 0x7")
    with pytest.raises(WarpsRace) as caught:
        run_kernel(kernel, "sm_86", grid=(1,), block=(128,), params=params, buffers=buffers)
    message = caught.value.message
    assert "warp 2 stores to them at 0x0080" in message and "then warp 3 loads them at 0x00f0" in message, message


def _mbarrier_kernel(wait: str) -> str:
    """sm_90: an mbarrier expecting one arrival; warp 1 stores out[t - 32] = t + 7, then thread 32
    arrives; `wait` (warp 0 waits for the phase); warp 0 loads out[t] into back[t]."""
    return f"""
.kernel mbar_handoff
    S2R R0, SR_TID.X
    ULDC.64 UR4, c[0x0][memory_descriptor]
    S2UR UR8, SR_CgaCtaId
    UMOV UR9, 0x400
    ULEA UR9, UR8, UR9, 0x18
    UMOV UR10, 0x1ffffe
    UMOV UR11, 0x7ffff800
    [B------:R0:W1:-:S01] SYNCS.EXCH.64 URZ, [UR9+0x0], UR10
    ISETP.GE.U32.AND P1, PT, R0, 0x20, PT
    ISETP.EQ.U32.AND P2, PT, R0, 0x20, PT
    ULDC.64 UR6, c[0x0][param+0x0]
    IADD3 R12, R0, 0x7, RZ
    LOP3.LUT R9, R0, 0x1f, RZ, 0xc0, !PT
    LEA R10, P0, R9, UR6, 0x2
    IADD3.X R11, RZ, UR7, RZ, P0, !PT
    @P1 STG.E [R10.64], R12
    [B------:R-:W-:-:S01] @P2 SYNCS.ARRIVE.TRANS64.A1T0 RZ, [UR9+0x0], RZ
    @P1 EXIT
    MOV R2, 0x400
    MOV R3, RZ
{wait}
    LDG.E R16, [R10.64]
    ULDC.64 UR12, c[0x0][param+0x8]
    LEA R20, P0, R0, UR12, 0x2
    IADD3.X R21, RZ, UR13, RZ, P0, !PT
    STG.E [R20.64], R16
    EXIT
"""


WAIT = """wait:
    [B------:R-:W4:-:S03] SYNCS.PHASECHK.TRANS64.TRYWAIT P0, [R2+URZ], R3
    @!P0 BRA wait"""


@pytest.mark.parametrize("wait", [WAIT, "    NOP"], ids=["waits", "does not wait"])
def test_an_mbarrier_wait_orders_the_producer_warps_global_stores(wait):
    """Warp 0 loads what warp 1 stored: ordered by warp 1's arrive and warp 0's wait that sees the
    phase complete (PTX: mbarrier arrive releases, test_wait / try_wait acquires); without the wait
    it races.  Expected values by hand: back[t] = t + 32 + 7 for warp 0."""
    buffers = {"out": np.zeros(32, np.uint32), "back": np.zeros(64, np.uint32)}
    at = buffer_addresses(buffers)
    params = b"".join(int(at[name]).to_bytes(8, "little") for name in ("out", "back"))
    run = lambda: run_kernel(_mbarrier_kernel(wait), "sm_90", grid=(1,), block=(64,), params=params,
                             buffers=buffers, shared_bytes=0x408)["back"]
    if wait == WAIT:
        assert list(run()[:32]) == [t + 39 for t in range(32)]
        return
    with pytest.raises(WarpsRace) as caught:
        run()
    assert "warp 1 stores to them" in caught.value.message and "then warp 0 loads them" in caught.value.message
