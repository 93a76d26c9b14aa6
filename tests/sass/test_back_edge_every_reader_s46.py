"""The back-edge search times every reader of a register in the next trip, not only the first instruction
that touches it (probe s46 leftovers8, finding 7; schedule.BACK_EDGE, `_back_edge_needs`).

The loop below writes R5 by MOV just before its back edge; the next trip reads R5 first by an IADD3 (an
ALU reader, ready 4 cycles after the MOV) and one cycle later by a DADD reading R4:R5 (the FP64 unit
takes its operands later: NVIDIA's Ampere tables as Mesa NAK publishes them, RedirectedFP64 reader after a
coupled ALU writer, 6 cycles -- bobc.sim.latencies RAW["fp64"]["alu"]).  BACK_EDGE asks a result's need of
the branch's own issue cycle (its stall is a margin on top): the cycles from the MOV to the branch plus the
cycles from the label to the reader must cover the reader's latency.  For the DADD that is
stall(MOV) + 1 (the IADD3's S01) >= 6, so the MOV needs S05.  Timed by the first toucher alone (the IADD3,
4 cycles) it had S04: one cycle short of the scheduler's own rule, covered on the GPU only by the branch's
stall.  Every shipped kernel assembles to the same bytes either way (the lead's merge check: every .sass of
examples/, specs/, bench/ and compiler/ for both targets)."""
from __future__ import annotations

import pytest

from bobc.sass import assemble
from bobc.sim import latencies

FILL = "".join(f"    IADD3 R{40 + i}, R{40 + i}, 0x1, RZ\n" for i in range(14))
LOOP = f"""
    MOV R4, 0x0
    MOV R5, 0x3ff00000
    MOV R21, 0x0
loop:
    IADD3 R20, R5, 0x1, RZ
    DADD R6, R4, R4
    IADD3 R21, R21, 0x1, RZ
    ISETP.NE.AND P0, PT, R21, 0x3, PT
{FILL}    MOV R5, 0x3ff00000
    @P0 BRA loop
    EXIT
"""


@pytest.mark.parametrize("target", ["sm_86", "sm_90"])
def test_a_later_reader_across_the_back_edge_is_timed_by_its_own_delay_s46(target):
    code = assemble(LOOP, target).instructions
    label = next(i for i, ins in enumerate(code) if ins.text.startswith("IADD3 R20, R5"))
    move = max(i for i, ins in enumerate(code) if ins.text.startswith("MOV R5"))
    branch = next(i for i, ins in enumerate(code) if "BRA" in ins.text)
    dadd = next(i for i, ins in enumerate(code) if ins.text.startswith("DADD"))
    needed = latencies.RAW["fp64"]["alu"]
    assert needed == 6                                  # NAK's table: FP64 reader after an ALU writer
    to_branch = sum(max(1, code[i].control.stall) for i in range(move, branch))
    from_label = sum(max(1, code[i].control.stall) for i in range(label, dadd))
    assert to_branch + from_label >= needed, (to_branch, from_label, [(i.text, i.control.stall) for i in code])
