"""REDUX, MATCH, FSET.BF and R2P under a guard that leaves some lanes out (probe s40 mutants4).

tests/sass/test_warp_forms.py runs ptxas's kernels with every lane executing, so the simulator's
handling of the lanes that do not execute was never held to anything: a REDUX counting them (or
filling them with 0 instead of the operation's identity), a MATCH comparing against them, an R2P
writing their predicates, an FSET.BF ignoring its predicate operand all passed.  Here lane t
executes when t % 4 != 0 (P0), and the expected values are the PTX ISA's, computed in Python over
the executing lanes only: redux.sync / match.sync reduce or compare "each active thread's" value
(PTX ISA, "Parallel Synchronization and Communication Instructions"), set.<cmp>.<combine> is
(a <cmp> b) <combine> p, and a guarded instruction changes nothing in a lane whose guard is false.
Lanes that do not execute keep R3 = 7.
"""
from __future__ import annotations

import struct

import numpy as np
import pytest

from bobc.sim.kernel import run_kernel

LANES = np.arange(32)
ACTIVE = LANES % 4 != 0
KEPT = 7


def _kernel(body: str) -> str:
    return f"""
.kernel forms
    S2R R0, SR_TID.X
    ULDC.64 UR4, c[0x0][memory_descriptor]
    ULDC.64 UR10, c[0x0][param+0x8]
    LEA R12, P0, R0, UR10, 0x2
    IADD3.X R13, RZ, UR11, RZ, P0, !PT
    LDG.E R2, [R12.64]
    LOP3.LUT R7, R0, 0x3, RZ, 0xc0, !PT
    ISETP.NE.U32.AND P0, PT, R7, RZ, PT
    MOV R3, {hex(KEPT)}
{body}
    ULDC.64 UR8, c[0x0][param+0x0]
    LEA R10, P1, R0, UR8, 0x2
    IADD3.X R11, RZ, UR9, RZ, P1, !PT
    STG.E [R10.64], R3
    EXIT
"""


def _run(body: str, values, target: str) -> list[int]:
    buffers = {"out": np.zeros(32, np.uint32), "in": np.asarray(values, dtype=np.uint32)}
    return run_kernel(_kernel(body), target, grid=(1,), block=(32,), params=["out", "in"], buffers=buffers)["out"].tolist()


def _s32(v: int) -> int:
    return v - (1 << 32) if v >> 31 else v


def _reduce(operation: str, values) -> int:
    active = [int(v) for v, a in zip(values, ACTIVE) if a]
    if operation == "SUM":
        return sum(active) & 0xFFFFFFFF
    if operation in ("MIN", "MAX"):
        return (min if operation == "MIN" else max)(active)
    if operation in ("MIN.S32", "MAX.S32"):
        return (min if operation == "MIN.S32" else max)(_s32(v) for v in active) & 0xFFFFFFFF
    out = {"": 0xFFFFFFFF, "OR": 0, "XOR": 0}[operation]
    for v in active:
        out = out & v if operation == "" else out | v if operation == "OR" else out ^ v
    return out


# inactive lanes (t % 4 == 0) hold what would change each result if they were counted
DATASETS = {
    "small": [0xFFFFFFFF if t % 4 == 0 else 0x100 + 37 * t for t in range(32)],
    "negative": [0 if t % 4 == 0 else 0x80000000 | (0x1234567 * t & 0x7FFFFFFF) for t in range(32)],
}


@pytest.mark.parametrize("target", ["sm_86", "sm_90"])
@pytest.mark.parametrize("data", sorted(DATASETS))
@pytest.mark.parametrize("operation", ["SUM", "MIN", "MAX", "MIN.S32", "MAX.S32", "", "OR", "XOR"])
def test_redux_reduces_the_executing_lanes_only(operation, data, target):
    values = DATASETS[data]
    opcode = f"REDUX.{operation}" if operation else "REDUX"
    got = _run(f"    @P0 {opcode} UR6, R2\n    @P0 MOV R3, UR6", values, target)
    want = _reduce(operation, values)
    assert got == [want if a else KEPT for a in ACTIVE], (opcode, data)


@pytest.mark.parametrize("target", ["sm_86", "sm_90"])
def test_match_any_compares_the_executing_lanes_only(target):
    values = [t % 3 for t in range(32)]
    want = [sum(1 << u for u in range(32) if ACTIVE[u] and values[u] == values[t]) if ACTIVE[t] else KEPT
            for t in range(32)]
    assert _run("    @P0 MATCH.ANY R3, R2", values, target) == want


@pytest.mark.parametrize("target", ["sm_86", "sm_90"])
def test_match_all_of_equal_executing_lanes_is_their_mask(target):
    """The executing lanes all hold 5, the others 9 (lane 0 among them): all equal, so each executing
    lane gets the executing lanes' mask and a true predicate."""
    values = [5 if a else 9 for a in ACTIVE]
    members = sum(1 << t for t in range(32) if ACTIVE[t])          # 0xEEEEEEEE
    body = "    ISETP.EQ.U32.AND P2, PT, RZ, RZ, PT\n    @P0 MATCH.ALL P2, R3, R2\n    @!P2 MOV R3, 0x1"   # P2 true before
    assert _run(body, values, target) == [members if a else KEPT for a in ACTIVE]


def _f32(x: float) -> int:
    return struct.unpack("<I", struct.pack("<f", x))[0]


@pytest.mark.parametrize("target", ["sm_86", "sm_90"])
def test_fset_bf_combines_its_predicate(target):
    """FSET.BF.LT.AND R3, R2, 2.0, P0: 1.0f where (x < 2) and P0 (t % 4 != 0), else 0.0f."""
    xs = [float(t % 5) for t in range(32)]
    body = f"    MOV R4, {hex(_f32(2.0))}\n    FSET.BF.LT.AND R3, R2, R4, P0"
    want = [_f32(1.0) if x < 2 and a else 0 for x, a in zip(xs, ACTIVE)]
    assert _run(body, [_f32(x) for x in xs], target) == want


@pytest.mark.parametrize("target", ["sm_86", "sm_90"])
def test_a_guarded_r2p_leaves_the_predicates_of_lanes_it_does_not_execute(target):
    """P1..P6 set true in every lane, then `@P0 R2P PR, R2, 0x7e`: executing lanes take bits 1..6
    of their word, the others keep all six true; P2R reads them back."""
    values = [(37 * t) & 0x7F for t in range(32)]
    body = "    MOV R9, 0x7e\n    R2P PR, R9, 0x7e\n    @P0 R2P PR, R2, 0x7e\n    P2R R3, PR, RZ, 0x7e"
    assert _run(body, values, target) == [v & 0x7E if a else 0x7E for v, a in zip(values, ACTIVE)]
