"""Lanes of a warp wait for each other at BSYNC and WARPSYNC (docs/simulator.md, "Races within a warp"
and "Limits"; bobc.sim.executor Launch._past_waits).

Expected values from the hardware's documented semantics and NumPy, never the simulator: on sm_70 and
later `BSSY Bx, target` records the warp's active lanes in convergence barrier Bx and `BSYNC Bx` makes
the arriving lanes wait until every recorded lane has arrived (or exited), so the instruction after
it runs with all of them (ptxas's reconvergence for a divergent if / loop: PTX shfl.sync / vote.sync
with a full mask then see every lane); `WARPSYNC mask` waits for the mask's lanes (PTX bar.warp.sync:
"causes executing thread to wait until all threads corresponding to membermask have executed a
bar.warp.sync", and orders their memory accesses).  Before session 41's bsyncsched the simulator ran
the lowest program counter first and let lanes pass a BSYNC / WARPSYNC alone: a path laid out after
its BSYNC (hand-written SASS) ran after the other lanes' SHFL / VOTE / LDS, which read stale values
(the `after_*` cases failed: SHFL gave 0 for lanes 0-15, VOTE 0xffff / 0xffff0000, the LDS 0).
ptxas lays each region out before its BSYNC (the ptxas cases pass either way: they pin that the
waiting leaves its code's values NumPy's)."""
from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
from ptx_kernels import kernel  # noqa: E402

from bobc.sim.faults import LanesRace, SimulationFault  # noqa: E402
from bobc.sim.kernel import buffer_addresses, run_kernel  # noqa: E402

from .conftest import shared_base  # noqa: E402

TARGETS = ("sm_86", "sm_90")
LANES = np.arange(32, dtype=np.uint32)

HEAD = """    S2R R0, SR_TID.X
    SHF.L.U32 R3, R0, 0x2, RZ
    ULDC.64 UR4, c[0x0][memory_descriptor]
    MOV R4, RZ
    MOV R5, RZ
    LOP3.LUT R6, R0, 0x10, RZ, 0x3c, !PT
    ISETP.GE.U32.AND P0, PT, R0, 0x10, PT
"""
TAIL = """    ULDC.64 UR6, c[0x0][param+0x0]
    LEA R10, P1, R0, UR6, 0x2
    IADD3.X R11, RZ, UR7, RZ, P1, !PT
    STG.E [R10.64], R5
    EXIT
"""
# lanes 0-15 take the fall-through, lanes 16-31 the path laid out after the BSYNC (and EXIT), which
# branches back to it: R4 = lane + 100 on the first, lane + 200 on the second
REGION = ("    BSSY B0, join\n    @P0 BRA high\n    IADD3 R4, R0, 0x64, RZ\njoin:\n    BSYNC B0\n{after}" + TAIL +
          "high:\n    IADD3 R4, R0, 0xc8, RZ\n{high}    BRA join\n")
SASS = {
    # SHFL.IDX of lane ^ 16 after the BSYNC
    "after_shfl": REGION.format(after="    SHFL.IDX PT, R5, R4, R6, 0x1f\n", high=""),
    # VOTE.ANY R, PT, PT (the active mask) after the BSYNC
    "after_vote": REGION.format(after="    VOTE.ANY R5, PT, PT\n", high=""),
    # the high lanes exit on their path: the BSYNC waits only for lanes still alive
    "after_exit": REGION.format(after="    VOTE.ANY R5, PT, PT\n", high="    EXIT\n"),
    # lanes 16-31 store word lane - 16, then WARPSYNC; lanes 0-15 WARPSYNC, then load word lane
    "after_warpsync": "    @P0 BRA high\n    {warpsync}\n    LDS R5, [R3]\nback:\n" + TAIL +
                      "high:\n    IADD3 R4, R0, 0xc8, RZ\n    STS [R3+-0x40], R4\n    {warpsync}\n    BRA back\n",
    # lanes 16-31 wait at a block barrier the lanes 0-15, held at the BSYNC, never reach: a deadlock
    "bar_in_region": REGION.format(after="    VOTE.ANY R5, PT, PT\n", high="    BAR.SYNC.DEFER_BLOCKING 0x0\n"),
}
EXPECTED = {
    "after_shfl": np.where((LANES ^ 16) >= 16, (LANES ^ 16) + 200, (LANES ^ 16) + 100).astype(np.uint32),
    "after_vote": np.full(32, 0xFFFFFFFF, np.uint32),
    "after_exit": np.where(LANES < 16, 0xFFFF, 0).astype(np.uint32),     # exited lanes store nothing
    "after_warpsync": np.where(LANES < 16, LANES + 16 + 200, 0).astype(np.uint32),
}


def _run_sass(name: str, target: str) -> np.ndarray:
    buffers = {"out": np.zeros(32, np.uint32)}
    at = buffer_addresses(buffers)
    body = SASS[name].replace("{warpsync}", "WARPSYNC 0xffffffff" if target == "sm_86" else "WARPSYNC.ALL")
    base = shared_base(target)          # past sm_90's system KiB (docs/targets.md); 0 on sm_86
    if base:
        body = body.replace("[R3]", f"[R3+{base:#x}]").replace("[R3+-0x40]", f"[R3+{base - 0x40:#x}]")
    text = f".kernel {name}\n.shared {256 + base}\n" + HEAD + body
    return run_kernel(text, target, grid=(1,), block=(32,), params=int(at["out"]).to_bytes(8, "little"),
                      buffers=buffers)["out"]


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_lanes_wait_at_bsync_and_warpsync(name, target):
    out = _run_sass(name, target)
    assert [hex(v) for v in out] == [hex(v) for v in EXPECTED[name]]


@pytest.mark.parametrize("target", TARGETS)
def test_lanes_held_at_bsync_by_lanes_at_a_barrier_deadlock(target):
    """Lanes 0-15 wait at the BSYNC for lanes 16-31, which wait at BAR.SYNC for the whole block (32
    threads, lanes 0-15 never come): the GPU hangs; the simulator names the BSYNC and a waiting lane."""
    with pytest.raises(SimulationFault) as caught:
        _run_sass("bar_in_region", target)
    message = caught.value.message
    assert "BSYNC B0" in message and "never arrive" in message and "deadlock" in message, message


def _numpy_loops(counts: np.ndarray, brk: bool) -> np.ndarray:
    """Each lane's value after its own loop (the PTX of tests/sim/ptx/reconverge.ptx in NumPy)."""
    values = []
    for n in counts.tolist():
        x, i = (7 if brk else 0), 0
        while i < n:
            x = (x * 1664525 + i) & 0xFFFFFFFF
            if brk and x & 7 == 3:
                x = ((x * 3) & 0xFFFFFFFF) ^ i
                break
            i += 1
        values.append(x)
    return np.array(values, dtype=np.uint32)


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("name", ["shflloop", "voteloop", "breakloop"])
def test_ptxas_collectives_after_divergent_loops(name, target):
    counts = ((LANES * 7) % 11).astype(np.uint32)       # 0..10 trips: lanes leave at different times
    out = run_kernel(kernel("reconverge", target), target, grid=(1,), block=(32,), params=["out", "in"],
                     buffers={"out": np.zeros(32, np.uint32), "in": counts}, kernel_name=name)["out"]
    values = _numpy_loops(counts, name == "breakloop")
    if name == "voteloop":
        expected = np.full(32, int(((values & 1).astype(np.uint64) << LANES.astype(np.uint64)).sum()), np.uint32)
    else:
        expected = values[(LANES + 1) % 32]
    assert (out == expected).all(), (out, expected)


@pytest.mark.parametrize("target", TARGETS)
def test_warpsync_on_one_path_only_leaves_a_race(target):
    """Lanes 0-15 store, then WARPSYNC the whole warp; lanes 16-31 (the other path) load what they
    stored with no WARPSYNC of their own.  bar.warp.sync orders memory only among the lanes that
    execute one ("all non-exited threads named in membermask must execute a corresponding
    bar.warp.sync"), so the load is unordered with the store: a race (before bsyncsched the
    simulator let lanes 0-15 pass their WARPSYNC alone, forgot the branch and accepted it)."""
    buffers = {"out": np.zeros(32, np.uint32)}
    at = buffer_addresses(buffers)
    base = shared_base(target)
    sync = "WARPSYNC 0xffffffff" if target == "sm_86" else "WARPSYNC.ALL"
    body = (f"    @P0 BRA high\n    MOV R2, 0x5\n    STS [R3+{base:#x}], R2\n    {sync}\n    BRA join\nhigh:\n"
            f"    LDS R5, [R3+{base - 0x40:#x}]\njoin:\n")
    text = f".kernel oneside\n.shared {256 + base}\n" + HEAD + body + TAIL
    with pytest.raises(LanesRace, match=r"lanes of one warp race on shared byte"):
        run_kernel(text, target, grid=(1,), block=(32,), params=int(at["out"]).to_bytes(8, "little"), buffers=buffers)
