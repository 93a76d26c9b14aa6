"""Both sides of a branch hold a convergence barrier region on the same B register (docs/simulator.md,
"What the executor implements", Control; bobc.sim.executor Launch.bssy_lanes).

ptxas allocates B registers per path: in `if (c) x = a / b; else x = sqrtf(a);` the div side's
`BSSY B1` (around its CALL.REL.NOINC of the division slow path) and the sqrt side's `BSSY B1` (around its
call of the sqrt slow path) are live at once in one warp.  Before session 43's bsyncdiv the simulator
kept one B1 mask per warp: the second side's BSSY replaced the lanes the first side's BSYNC B1 waited
for, the first side's fast lanes went on while its slow lanes were still in the called function, and
those lanes, returning, waited at BSYNC B1 for the other side's lanes (held at BSYNC B0): "waits for
lanes of its warp that never arrive" for div.rn.f32 | sqrt.rn.f32, div.rn.f64 | sqrt.rn.f64,
div.rn.f32 | div.rn.f64 ... (probe s43 hazardlanes, bsyncdiv).

Expected values never come from the simulator: the ptxas kernels' results are IEEE 754's (div.rn /
sqrt.rn are correctly rounded, PTX ISA: NumPy's float32 / float64 division and square root, which are
too); the hand-written SASS's from `BSSY Bx` recording the lanes that execute it and `BSYNC Bx` waiting
for those lanes (VOTE.ANY after it sees exactly them)."""
from __future__ import annotations

import subprocess

import numpy as np
import pytest

from bobc.nvtools import ptxas
from bobc.sim.kernel import buffer_addresses, run_kernel
from tests.sass.test_f64_division_s43 import kernel, operands

TARGETS = ("sm_86", "sm_90")
BLOCK = 64
OPS = {     # the op, the two words the thread stores (%fd3)
    "div32": "div.rn.f32 %f5, %f1, %f2; mov.b32 %r10, %f5; mov.b64 %fd3, {%r10, %r10};",
    "sqrt32": "sqrt.rn.f32 %f5, %f1; mov.b32 %r10, %f5; mov.b64 %fd3, {%r10, %r3};",
    "div64": "div.rn.f64 %fd3, %fd1, %fd2;",
    "sqrt64": "sqrt.rn.f64 %fd3, %fd1;",
    "rcp64": "rcp.rn.f64 %fd3, %fd1;",
}
CONDS = {   # %p1: the lanes that take the second op
    "odd": "and.b32 %r12, %r1, 1; setp.eq.u32 %p1, %r12, 0;",      # even threads
    "data": "setp.lt.u32 %p1, %r3, 0x40000000;",                   # a's high word below 0x40000000
}


def _ieee(op: str, words: np.ndarray) -> np.ndarray:
    """Each thread's expected [lo, hi] words as one uint64 (NumPy's correctly rounded IEEE operations)."""
    a = (words[0].astype(np.uint64) | words[1].astype(np.uint64) << np.uint64(32)).view(np.float64)
    b = (words[2].astype(np.uint64) | words[3].astype(np.uint64) << np.uint64(32)).view(np.float64)
    with np.errstate(all="ignore"):
        if op == "div32":
            q = (words[0].view(np.float32) / words[1].view(np.float32)).view(np.uint32).astype(np.uint64)
            return q | q << np.uint64(32)
        if op == "sqrt32":
            q = np.sqrt(words[0].view(np.float32)).view(np.uint32).astype(np.uint64)
            return q | words[1].astype(np.uint64) << np.uint64(32)
        return {"div64": a / b, "sqrt64": np.sqrt(a), "rcp64": 1.0 / a}[op].view(np.uint64)


def _nan(op: str, bits: np.ndarray) -> np.ndarray:
    if op in ("div32", "sqrt32"):
        return np.isnan((bits & np.uint64(0xFFFFFFFF)).astype(np.uint32).view(np.float32))
    return np.isnan(bits.view(np.float64))


CASES = [("div32:sqrt32", "odd", "sm_86"), ("div32:sqrt32", "data", "sm_90"), ("div64:sqrt64", "odd", "sm_90"),
         ("div64:sqrt64", "data", "sm_86"), ("div32:div64", "data", "sm_86"), ("sqrt32:rcp64", "odd", "sm_90")]


@pytest.mark.parametrize("pair, cond, target", CASES)
def test_called_slow_paths_on_both_sides(pair, cond, target, tmp_path):
    """ptxas -O3 code with a slow path called on each side of a branch runs to IEEE 754's results for
    every thread (it stopped at BSYNC B0 before: a deadlock)."""
    first, second = pair.split(":")
    name = f"k_{first}_{second}_{cond}"
    body = f"{CONDS[cond]} @%p1 bra $L1; {OPS[first]} bra.uni $L2; $L1: {OPS[second]} $L2: "
    ptx, cubin = tmp_path / f"{name}.ptx", tmp_path / f"{name}.cubin"
    ptx.write_text(kernel(name, target, body))
    subprocess.run([ptxas(), f"-arch={target}", "-O3", "-o", str(cubin), str(ptx)], check=True, capture_output=True)
    words = operands(2048, 7)[:, :1024]
    n = words.shape[1]
    out = run_kernel(cubin.read_bytes(), target, grid=n // BLOCK, block=BLOCK, params=["out", "in", np.uint32(n)],
                     buffers={"out": np.zeros(2 * n, np.uint32), "in": words.astype(np.uint32).reshape(-1)},
                     kernel_name=name)["out"]
    got = out.reshape(n, 2).copy().view(np.uint64)[:, 0]
    second_side = (np.arange(n) & 1) == 0 if cond == "odd" else words[1] < 0x40000000
    assert second_side.any() and (~second_side).any()
    for op, lanes in ((first, ~second_side), (second, second_side)):
        expected = _ieee(op, words)[lanes]
        nan = _nan(op, expected)
        assert (_nan(op, got[lanes]) == nan).all(), op
        wrong = np.flatnonzero(got[lanes][~nan] != expected[~nan])
        assert wrong.size == 0, (op, [hex(v) for v in got[lanes][~nan][wrong[:4]]],
                                 [hex(v) for v in expected[~nan][wrong[:4]]])


# Hand-written SASS: lanes 0-15 and 16-31 take two sides, each opens its own B1 region and parts its lanes
# again; on each side the upper half runs code laid out at the end (as a called slow path is), the low
# side's after the high side's, so the high side's BSSY B1 runs while the low side's region is open.
# After each side's BSYNC B1 the VOTE.ANY sees that side's 16 lanes.
SASS = """    S2R R0, SR_TID.X
    MOV R5, RZ
    ISETP.GE.U32.AND P0, PT, R0, 0x10, PT
    LOP3.LUT R1, R0, 0x8, RZ, 0xc0, !PT
    ISETP.NE.U32.AND P1, PT, R1, RZ, PT
    BSSY B0, join
    @P0 BRA high
    BSSY B1, low_join
    @P1 BRA low_far
low_join:
    BSYNC B1
    VOTE.ANY R5, PT, PT
    BRA join
high:
    BSSY B1, high_join
    @P1 BRA high_far
high_join:
    BSYNC B1
    VOTE.ANY R5, PT, PT
join:
    BSYNC B0
    ULDC.64 UR6, c[0x0][param+0x0]
    LEA R10, P2, R0, UR6, 0x2
    IADD3.X R11, RZ, UR7, RZ, P2, !PT
    STG.E [R10.64], R5
    EXIT
high_far:
    IADD3 R4, R0, 0x1, RZ
    BRA high_join
low_far:
    IADD3 R4, R0, 0x1, RZ
    IADD3 R4, R4, 0x1, RZ
    BRA low_join
"""


@pytest.mark.parametrize("target", TARGETS)
def test_two_paths_own_b1_regions(target):
    """Before bsyncdiv: the low side's lanes 0-7 went on with the high side's B1 (VOTE 0xff), lanes 8-15
    then waited at BSYNC B1 for lanes 16-31, held at BSYNC B0: "never arrive"."""
    buffers = {"out": np.zeros(32, np.uint32)}
    at = buffer_addresses(buffers)
    text = ".kernel twob1\n" + SASS.replace("    ULDC.64 UR6", "    ULDC.64 UR4, c[0x0][memory_descriptor]\n    ULDC.64 UR6")
    out = run_kernel(text, target, grid=(1,), block=(32,), params=int(at["out"]).to_bytes(8, "little"),
                     buffers=buffers)["out"]
    expected = np.where(np.arange(32) < 16, 0x0000FFFF, 0xFFFF0000).astype(np.uint32)
    assert [hex(v) for v in out] == [hex(v) for v in expected]
