"""Two operand reads bobc's scheduler timed a cycle short of NVIDIA's tables, judged by the simulator's
control-code checker (bobc.sim.hazards: NVIDIA's Ampere tables as Mesa NAK publishes them, sm80_instr_latencies.rs,
plus ptxas's sm_90 minimums -- written apart from bobc.sass.schedule's constants).  Found while walking loops
through the checker (probe s45 backedge, tests/sass/test_back_edge_paths_checked_s45.py):

- HFMA2.MMA reads its register operands as late as the FP64 unit: NAK gives it a reader class of its own,
  HFMA2_MMA, whose row is RedirectedFP64's (6 cycles after an ALU / FMA writer; bobc.sim.latencies
  RAW["fp64"], "also HFMA2.MMA's reads").  bobc issued it 5 cycles after an IADD3 or LOP3 (the ALU
  latency 4 and a pipe crossing).
- An HMMA reading sm_90's timed DADD result: NAK's RedirectedFP64 writer -> MMA_2x_collect reader is 11;
  bobc issued it 10 cycles on (8 and the ALU reader's FP64 result delay 2).
DADD -> HFMA2.MMA is held too (sm_90: RAW_SM90's FP64-row reader after an FP64 writer, 8 cycles).  Each
pair failed before the fix but that last one.
"""
from __future__ import annotations

import pytest

from bobc.sass import assemble
from bobc.sim.faults import Hazard
from bobc.sim.hazards import Checker
from bobc.sim.sass_frontend import decode


def _hazard(source: str, target: str) -> str | None:
    assembled = assemble(source, target)
    arch = target.replace("sm_", "SM")
    checker = Checker("kernel", arch)
    for ins in decode(assembled.code, arch):
        try:
            checker.issue(ins)
        except Hazard as hazard:
            return f"{hazard.reason}; stalls {[x.control.stall for x in assembled.instructions]}"
    return None


STRAIGHT = {
    "iadd3_hfma2_mma": (["IADD3 R4, R8, R9, RZ", "HFMA2.MMA R7, R4, R5, R6", "STG.E [R2.64], R7"],
                        ["sm_86", "sm_90"]),
    "lop3_hfma2_mma": (["LOP3.LUT R4, R8, R9, RZ, 0xc0, !PT", "HFMA2.MMA R7, R4, R5, R6", "STG.E [R2.64], R7"],
                       ["sm_86", "sm_90"]),
    "dadd_hmma": (["DADD R4, R8, R10", "HMMA.16816.F32 R12, R4, R6, R12", "MOV R20, R21", "MOV R22, R23",
                   "STG.E [R2.64], R12"], ["sm_90"]),
    "dadd_hfma2_mma": (["DADD R4, R8, R10", "HFMA2.MMA R7, R4, R5, R6", "STG.E [R2.64], R7"], ["sm_90"]),
}


@pytest.mark.parametrize("name", sorted(STRAIGHT))
def test_the_straight_pair_passes_the_checker(name):
    lines, targets = STRAIGHT[name]
    for target in targets:
        source = ".kernel k\n.registers 40\n" + "".join(f"    {x}\n" for x in lines) + "    EXIT\n"
        assert _hazard(source, target) is None, f"{name} on {target}"
