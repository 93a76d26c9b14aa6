"""A control-code hazard in a hand-written kernel says what to change (probe s45 hazards4 finding 3): before s45
every hazard's hint was the same sentence ("correct a written control code"), the producer was an address alone and
a uniform predicate was named P8 + n.  Now the hint names the wait-mask digit, the scoreboard to set or the stall to
raise, the message places the producer at its line, and UPn is UPn.  Each case's expected control code is the one
ptxas 13 or NVIDIA's tables give for the dependency (docs/simulator.md, "The control-code checker": an ALU result
to a memory operand 5 cycles -- ptxas never issues an STG fewer than 5 after the IADD3 that feeds it --, a
compare's predicate to a guard 13, a variable-latency result on its scoreboard), and following the hint makes the
kernel run."""
from __future__ import annotations

import numpy as np
import pytest

from bobc.sim.faults import Hazard
from bobc.sim.kernel import Pointer, run_kernel

TARGETS = pytest.mark.parametrize("target", ["sm_86", "sm_90"])
HEAD = (".kernel k\n"
        "[B------:R-:W-:-:S02] ULDC.64 UR4, c[0x0][memory_descriptor]\n"
        "[B------:R-:W0:-:S01] LDC.64 R2, c[0x0][RZ+param+0x0]\n"
        "[B0-----:R-:W-:-:S04] NOP\n")          # the body starts at line 5, address 0x0030
TAIL = "[B------:R-:W-:-:S05] EXIT\n"


def _run(target: str, body: str):
    out = run_kernel(HEAD + body + TAIL, target, grid=1, block=32, params=[Pointer("out")],
                     buffers={"out": np.full(32, 9, np.uint32)})
    return out["out"]


def _refused(target: str, body: str) -> Hazard:
    with pytest.raises(Hazard) as caught:
        _run(target, body)
    return caught.value


# (body, the line refused, where the producer is, what the hint says, the body changed as it says, out[0] then)
CASES = {
    "a load read before its wait": (
        "[B------:R-:W1:-:S04] LDG.E R7, [R2.64]\n[B------:R-:W-:-:S05] STG.E [R2.64+0x4], R7\n", 6, "0x0030 is <kernel>:5:1",
        "wait on scoreboard 1 here: put 1 in this instruction's wait mask ([B-1----:...])",
        ("[B------:R-:W-:-:S05] STG", "[B-1----:R-:W-:-:S05] STG"), 9),
    "a MUFU that sets no write scoreboard": (
        "[B------:R-:W-:-:S04] MOV R6, 0x3f800000\n[B------:R-:W-:Y:S15] MUFU.RCP R7, R6\n"
        "[B------:R-:W-:-:S05] STG.E [R2.64], R7\n", 7, "0x0040 is <kernel>:6:1",
        "set a write scoreboard on the instruction at 0x0040 (W0..W5 in its control code) and wait on it here",
        ("[B------:R-:W-:Y:S15] MUFU.RCP R7, R6\n[B------:R-:W-:-:S05] STG",
         "[B------:R-:W2:Y:S15] MUFU.RCP R7, R6\n[B--2---:R-:W-:-:S05] STG"), 0x3F800000),
    "an ALU result read by a store a cycle early": (
        "[B------:R-:W-:-:S04] MOV R7, 0x5\n[B------:R-:W-:-:S05] STG.E [R2.64], R7\n", 6, "0x0030 is <kernel>:5:1",
        "issue it 1 cycle later: raise the stall of the instruction issued before it (0x0030) from S04 to S05",
        ("S04] MOV R7", "S05] MOV R7"), 5),
    "a guard read before the compare's predicate is ready": (
        "[B------:R-:W-:-:S05] MOV R7, 0x5\n[B------:R-:W-:-:S03] ISETP.GE.AND P1, PT, R7, RZ, PT\n"
        "[B------:R-:W-:-:S05] @P1 STG.E [R2.64], R7\n", 7, "0x0040 is <kernel>:6:1",
        "issue it 10 cycles later: raise the stall of the instruction issued before it (0x0040) from S03 to Y:S13",
        ("-:S03] ISETP", "Y:S13] ISETP"), 5),
    "a store's source overwritten before its read scoreboard": (
        "[B------:R-:W-:-:S05] MOV R7, 0x5\n[B------:R0:W-:-:S01] STG.E [R2.64], R7\n"
        "[B------:R-:W-:-:S05] MOV R7, 0x6\n", 7, "0x0040 is <kernel>:6:1",
        "wait on read scoreboard 0 here: put 0 in this instruction's wait mask ([B0-----:...])",
        ("[B------:R-:W-:-:S05] MOV R7, 0x6", "[B0-----:R-:W-:-:S05] MOV R7, 0x6"), 5),
    "a load's register overwritten while the load may land": (
        "[B------:R-:W1:-:S04] LDG.E R7, [R2.64]\n[B------:R-:W-:-:S05] MOV R7, 0x6\n"
        "[B-1----:R-:W-:-:S05] STG.E [R2.64], R7\n", 6, "0x0030 is <kernel>:5:1",
        "wait on scoreboard 1 here: put 1 in this instruction's wait mask ([B-1----:...])",
        ("[B------:R-:W-:-:S05] MOV R7, 0x6", "[B-1----:R-:W-:-:S05] MOV R7, 0x6"), 6),
}


@TARGETS
@pytest.mark.parametrize("case", sorted(CASES))
def test_a_hazard_says_what_to_change_and_the_change_runs(target, case):
    body, line, producer, says, (old, new), first = CASES[case]
    fault = _refused(target, body)
    assert fault.span.line == line and fault.span.column == 1
    opcode = body.splitlines()[line - 5].split("] ", 1)[1].split(" [")[0].split(",")[0]
    assert f"hazard at {0x30 + 16 * (line - 5):#06x} ({opcode}" in fault.message       # the instruction named
    assert fault.hint.startswith(says), fault.hint
    assert f"({producer})" in fault.message                                                 # the producer placed
    assert old in body
    assert _run(target, body.replace(old, new))[0] == first


@TARGETS
def test_a_uniform_predicate_is_named_as_sass_names_it(target):
    fault = _refused(target, "[B------:R-:W-:-:S02] ULDC UR6, c[0x0][0x0]\n"
                             "[B------:R-:W-:-:S10] UISETP.GT.AND UP1, UPT, UR6, URZ, UPT\n"
                             "[B------:R-:W-:-:S05] @UP1 UIADD3 UR8, UR6, URZ, URZ\n")
    assert "reads UP1 10 cycles after its producer at 0x0040" in fault.reason and "P9" not in fault.message
    assert fault.hint.startswith("issue it 1 cycle later: raise the stall of the instruction issued before it "
                                 "(0x0040) from S10 to S11")
