"""bobc's control codes for loops, judged on every path by the simulator's control-code checker, and the
the back edge's margin pinned (probe s45 backedge; the straight-line pairs that search found refused are
tests/sass/test_schedule_fp64_like_reads_s45.py).

The checker (bobc.sim.hazards) times reads with NVIDIA's Ampere tables as Mesa NAK publishes them
(sm80_instr_latencies.rs) plus ptxas's sm_90 minimums, tables written apart from bobc.sass.schedule's
constants.  Each loop below carries a register written near its end into the next trip, where it is read
at the top behind an inner label (a forward branch from before the loop enters there) or a forward branch
in the body: the case the back-edge search (schedule.BACK_EDGE, `_back_edge_needs`) times from the loop's
label.  Every path is walked -- each guarded branch taken or not, each back edge up to three times -- so
the straight trip, the back edge and the entry through the inner label are all judged.

The last test pins the back edge's `worst` margin (a register the search does not see read before it
stops must be ready for the slowest reader after the stop): with it dropped (mutant S54 of probe s45
mutants11) an HMMA at the inner label read the previous trip's HMMA accumulator 26 cycles on.  NVIDIA's
tables do not refuse that (MMA_2x_collect -> MMA reader 18), so the checker cannot catch it; the expected
value is ptxas's own floor instead: 26 cycles is the longest wait ptxas leaves after an HMMA.16816 for an
ALU reader (tests/sass/data corpus, schedule.FIXED_LATENCIES' note), and NVIDIA's tables read an
MMA_2x_collect result one cycle later into another MMA than into the ALU (18 against 17), so an HMMA
reading it issues at least 27 cycles on.
"""
from __future__ import annotations

import pytest

from bobc.sass import assemble
from bobc.sim.faults import Hazard
from bobc.sim.hazards import Checker
from bobc.sim.sass_frontend import decode

TRIPS = 3
FILL = "".join(f"    IADD3 R{40 + i}, R{40 + i}, 0x1, RZ\n" for i in range(8))


def _paths(code) -> list[list[int]]:
    """Every issue order of `code`: a guarded BRA taken (a back edge at most TRIPS times) or not."""
    out: list[list[int]] = []

    def always(ins):
        return ins.guard == 7 and not ins.guard_negated

    def go(pos, seq, count):
        while pos < len(code):
            ins = code[pos]
            seq = seq + [pos]
            if ins.opcode == "EXIT" and always(ins):
                break
            if ins.opcode == "BRA":
                target = ins.operands[0].value // 16
                if target > pos or count.get(pos, 0) < TRIPS:
                    go(target, seq, {**count, pos: count.get(pos, 0) + 1})
                if always(ins):
                    return
            pos += 1
        out.append(seq)

    go(0, [], {})
    return out


def _hazards(source: str, target: str) -> list[str]:
    assembled = assemble(source, target)
    arch = target.replace("sm_", "SM")
    code = decode(assembled.code, arch)
    found = []
    for path in _paths(code):
        checker = Checker("kernel", arch)
        for i in path:
            try:
                checker.issue(code[i])
            except Hazard as hazard:
                found.append(f"path {path}: {hazard.reason}; stalls "
                             f"{[x.control.stall for x in assembled.instructions]}")
                break
    return found


def _entered_loop(producer: str, reader: str) -> str:
    """A loop entered at `mid` by a branch before it; `reader` (at mid) reads what `producer`, the last
    instruction before the back edge, wrote on the previous trip."""
    return (".kernel k\n.registers 64\n    MOV R30, 0x3\n    ISETP.GE.AND P1, PT, R31, 0x1, PT\n"
            "    @P1 BRA mid\nloop:\n    NOP\nmid:\n" + f"    {reader}\n"
            "    IADD3 R30, R30, -0x1, RZ\n    ISETP.GE.AND P0, PT, R30, 0x1, PT\n"
            + f"    {producer}\n    @P0 BRA loop\n" + FILL + "    STG.E [R2.64], R20\n    EXIT\n")


def _branching_loop(producer: str, reader: str) -> str:
    """A loop whose body branches forward over work before `reader` reads what `producer` wrote last trip."""
    return (".kernel k\n.registers 64\n    MOV R30, 0x3\nloop:\n    ISETP.GE.AND P1, PT, R30, 0x2, PT\n"
            "    @P1 BRA skip\n    IADD3 R32, R32, 0x1, RZ\nskip:\n" + f"    {reader}\n"
            "    IADD3 R30, R30, -0x1, RZ\n    ISETP.GE.AND P0, PT, R30, 0x1, PT\n"
            + f"    {producer}\n    @P0 BRA loop\n" + FILL + "    STG.E [R2.64], R20\n    EXIT\n")


# (producer, reader at the loop's top, targets): pairs whose NVIDIA figure is tight against bobc's rule
LOOP_PAIRS = {
    "iadd3_ldg_address": ("IADD3 R4, R4, 0x4, RZ", "LDG.E R20, [R4.64]", ["sm_86", "sm_90"]),
    "ffma_hmma": ("FFMA R8, R8, R9, R10", "HMMA.16816.F32 R20, R8, R12, R20", ["sm_86", "sm_90"]),
    "hmma_hmma": ("HMMA.16816.F32 R4, R8, R12, R4", "HMMA.16816.F32 R20, R8, R12, R4", ["sm_86", "sm_90"]),
    "hmma_fadd": ("HMMA.16816.F32 R4, R8, R12, R4", "FADD R20, R4, R5", ["sm_86", "sm_90"]),
    "lop3_hfma2_mma": ("LOP3.LUT R4, R4, R9, RZ, 0xc0, !PT", "HFMA2.MMA R20, R4, R5, R6", ["sm_86", "sm_90"]),
    "isetp_guard": ("ISETP.GE.AND P2, PT, R4, R5, PT", "@P2 IADD3 R20, R4, R5, RZ", ["sm_86", "sm_90"]),
    "isetp_vote": ("ISETP.GE.AND P2, PT, R4, R5, PT", "VOTE.ANY R20, PT, P2", ["sm_86", "sm_90"]),
    "wide_high": ("IMAD.WIDE R4, R4, R5, R6", "IADD3 R20, R5, R9, RZ", ["sm_86", "sm_90"]),
    "dadd_fsel": ("DADD R4, R4, R8", "FSEL R20, R5, R9, P1", ["sm_90"]),
    "dadd_hmma": ("DADD R8, R8, R10", "HMMA.16816.F32 R20, R8, R12, R20", ["sm_90"]),
    "ulop3_popc": ("ULOP3.LUT UR4, UR4, UR6, URZ, 0xc0, !UPT", "POPC R20, UR4", ["sm_86", "sm_90"]),
    "iadd3_lds_overwrite": ("IADD3 R20, R20, 0x1, RZ", "LDS R20, [R6]", ["sm_86", "sm_90"]),
}


@pytest.mark.parametrize("shape", [_entered_loop, _branching_loop], ids=["inner_label", "forward_branch"])
@pytest.mark.parametrize("name", sorted(LOOP_PAIRS))
def test_every_path_through_the_loop_passes_the_checker(name, shape):
    producer, reader, targets = LOOP_PAIRS[name]
    for target in targets:
        assert _hazards(shape(producer, reader), target) == [], f"{name} on {target}"


@pytest.mark.parametrize("target", ["sm_86", "sm_90"])
def test_an_hmma_at_an_inner_label_reads_the_last_trips_product_late_enough(target):
    """The back edge's `worst` margin (see the module's note): the HMMA at `mid` reads the accumulator the
    HMMA before the back edge wrote, at least 26 + 1 cycles after it on the taken path."""
    source = _entered_loop("HMMA.16816.F32 R4, R8, R12, R16", "HMMA.16816.F32 R16, R8, R12, R4")
    code = assemble(source, target).instructions
    issue, cycle = [], 0
    for x in code:
        issue.append(cycle)
        cycle += x.control.stall
    producer = max(i for i, x in enumerate(code) if x.text.startswith("HMMA"))
    reader = min(i for i, x in enumerate(code) if x.text.startswith("HMMA"))
    branch, label = producer + 1, reader - 1
    assert code[branch].text.startswith("@P0 BRA") and code[label].text == "NOP"
    taken = issue[branch] + code[branch].control.stall - issue[producer] + issue[reader] - issue[label]
    assert taken >= 26 + 1, f"{taken} cycles; stalls {[x.control.stall for x in code]}"
    assert _hazards(source, target) == []
