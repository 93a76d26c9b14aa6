"""A cp.async group counted on another scoreboard than SB0 is waited by DEPBAR.LE on that scoreboard, and a
read of a group not yet waited says which DEPBAR waits for it (probe s46 leftovers8, finding 4).

Before: `DEPBAR.LE SB1, 0x0` after an `LDGDEPBAR` on W1 was refused "DEPBAR.LE (DEPBAR.LE SB0, N:
cp.async.wait_group) is not modeled" -- though docs/simulator.md says DEPBAR.LE SBn, N waits for the groups
counted on SBn -- and a read of a group committed on W1 but waited on SB0 was told to use "LDGDEPBAR with
write scoreboard 0, then DEPBAR.LE SB0, N", whatever the kernel had set.  Oracles: nvdisasm decodes the
assembled `DEPBAR.LE SB1, 0x1` as that instruction (a form of the ISA, not only SB0's); the copied values
are NumPy's gather of the input (thread i copies 16 bytes from input byte 16 i to its 16 shared bytes, then
stores its first word: input word 4 i); the DEPBAR the message asks for is the one whose scoreboard the
kernel's own LDGDEPBAR set, and written as it says, the kernel runs and gives that gather."""
from __future__ import annotations

import os
import subprocess

import numpy as np
import pytest

from bobc.nvtools import nvdisasm
from bobc.sass.assembler import assemble
from bobc.sim.faults import SimulationFault
from bobc.sim.kernel import Pointer, run_kernel

TARGETS = pytest.mark.parametrize("target", ["sm_86", "sm_90"])
INPUT = np.arange(128, dtype=np.uint32) + 100


def _kernel(commit: str, wait: str, target: str) -> str:
    descriptor = "0x118" if target == "sm_86" else "0x208"
    base = 0x160 if target == "sm_86" else 0x210
    shared = 0 if target == "sm_86" else 0x400          # sm_90: the block's own shared memory from 0x400
    return f"""
[B------:R-:W0:-:S01] S2R R0, SR_TID.X
[B------:R-:W-:-:S02] ULDC.64 UR4, c[0x0][{descriptor}]
[B------:R-:W1:-:S01] LDC.64 R2, c[0x0][{base + 8:#x}]
[B------:R-:W2:-:S01] LDC.64 R8, c[0x0][{base:#x}]
[B01----:R-:W-:-:S05] IMAD.SHL.U32 R5, R0, 0x10, RZ
[B------:R-:W-:-:S06] IMAD.WIDE.U32 R2, R0, 0x10, R2
[B------:R-:W-:-:S05] IADD3 R5, R5, {shared:#x}, RZ
[B------:R-:W-:-:S02] LDGSTS.E.128 [R5], [R2.64]
[B------:R-:{commit}:-:S04] LDGDEPBAR
[B------:R-:W-:Y:S04] {wait}
[B------:R-:W-:-:S06] BAR.SYNC.DEFER_BLOCKING 0x0
[B------:R-:W3:-:S01] LDS R6, [R5]
[B--2---:R-:W-:-:S06] IMAD.WIDE.U32 R8, R0, 0x4, R8
[B---3--:R-:W-:-:S05] STG.E [R8.64], R6
[B------:R-:W-:-:S05] EXIT
"""


def _run(commit: str, wait: str, target: str) -> np.ndarray:
    return run_kernel(_kernel(commit, wait, target), target, grid=1, block=32, params=[Pointer("out"), Pointer("inp")],
                      shared_bytes=512 + (0x400 if target == "sm_90" else 0),
                      buffers={"out": np.zeros(32, np.uint32), "inp": INPUT})["out"]


@TARGETS
def test_nvdisasm_reads_depbar_on_scoreboard_one_s46(target):
    tool = nvdisasm()
    if tool is None or not os.access(tool, os.X_OK):
        pytest.skip("nvdisasm not installed")
    import tempfile
    with tempfile.NamedTemporaryFile(suffix=".bin") as raw:
        raw.write(assemble("    DEPBAR.LE SB1, 0x1\n    EXIT\n", target).code)
        raw.flush()
        listed = subprocess.run([tool, "-b", target.upper().replace("_", ""), raw.name], check=True,
                                capture_output=True, text=True).stdout
    assert "DEPBAR.LE SB1, 0x1 ;" in listed, listed


@TARGETS
def test_a_group_counted_on_sb1_is_waited_by_depbar_on_sb1_s46(target):
    out = _run("W1", "DEPBAR.LE SB1, 0x0", target)
    assert list(out) == list(INPUT[::4])                     # NumPy's gather: word 4 i of the input


@TARGETS
@pytest.mark.parametrize("commit,wait,asked", [
    ("W1", "DEPBAR.LE SB0, 0x0", "DEPBAR.LE SB1, 0x0"),     # the wait on another scoreboard than the commit's
    ("W2", "DEPBAR.LE SB0, 0x0", "DEPBAR.LE SB2, 0x0"),
    ("W1", "DEPBAR.LE SB1, 0x1", "DEPBAR.LE SB1, 0x0"),     # the one group left in flight by N = 1
    ("W0", "DEPBAR.LE SB1, 0x0", "DEPBAR.LE SB0, 0x0"),
])
def test_an_unwaited_group_names_the_depbar_that_waits_for_it_s46(target, commit, wait, asked):
    with pytest.raises(SimulationFault) as caught:
        _run(commit, wait, target)
    message = caught.value.message
    assert "has not yet landed" in message and "is not modeled" not in message, message
    assert f"committed on scoreboard {commit[1]} (its LDGDEPBAR's {commit})" in message, message
    assert f"wait for it with {asked}" in message, message
    assert "write scoreboard 0, then DEPBAR.LE SB0" not in message
    assert list(_run(commit, asked, target)) == list(INPUT[::4])      # written as it says, it runs
