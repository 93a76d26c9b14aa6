"""The control-code checker times the vector predicate that VOTEU and BAR.RED read as a VOTE's: at dispatch,
13 cycles after the ISETP (any coupled writer) that wrote it (probe s45 mutants11).

It classed VOTEU's predicate operand by the instruction's U prefix as a uniform-datapath read (4 cycles after an
ISETP) and BAR.RED's as a coupled ALU read (4), so `bobc sim` accepted hand-written control codes that read the
predicate 5 cycles on -- where a VOTE.ANY 5 cycles after its ISETP balloted the predicate's previous value on the
H200 (bobc.sass.schedule, PREDICATE_READ_AT_DISPATCH).  Found by mutating the scheduler: with VOTEU and BAR taken
out of PREDICATE_READ_AT_DISPATCH it issued both 5 cycles after the ISETP and the checker said nothing.

Independent figures: NVIDIA's Ampere tables (Mesa NAK sm80_instr_latencies.rs, PredLatencySM80::op_category:
`Op::Vote(_) => Disp_Alu` whether uniform or not -- VOTEU is NAK's uniform Op::Vote -- and pred_read_after_write:
a Disp_Alu reader 13 cycles after a Coupled / FMA / FP16 writer, 14 after an FP64 one); ptxas 13's code leaves 13
cycles from ISETP to VOTEU and to BAR.RED in the corpus (bobc.sass.schedule's comment; tests/sass/data)."""
from __future__ import annotations

import pytest

from bobc.sass import assemble
from bobc.sim.faults import Hazard
from bobc.sim.hazards import Checker
from bobc.sim.sass_frontend import decode

READERS = {"VOTE": "VOTE.ANY R7, PT, P0",
           "VOTEU": "VOTEU.ANY UR4, UPT, P0",
           "BAR.RED": "BAR.RED.POPC.DEFER_BLOCKING 0x0, P0"}


def _issue(target: str, reader: str, stall: int) -> None:
    yield_flag = "Y" if stall > 11 else "-"
    source = (f"[B------:R-:W-:{yield_flag}:S{stall:02d}] ISETP.GE.AND P0, PT, R4, R5, PT\n"
              f"[B------:R-:W-:-:S06] {READERS[reader]}\n"
              "[B------:R-:W-:-:S05] EXIT\n")
    arch = target.replace("sm_", "SM")
    checker = Checker("kernel", arch)
    for ins in decode(assemble(source, target).code, arch):
        checker.issue(ins)


@pytest.mark.parametrize("target", ["sm_86", "sm_90"])
@pytest.mark.parametrize("reader", sorted(READERS))
def test_a_predicate_read_at_dispatch_needs_thirteen_cycles(target, reader):
    _issue(target, reader, 13)
    for stall in (5, 12):
        with pytest.raises(Hazard) as caught:
            _issue(target, reader, stall)
        assert "reads P0" in caught.value.reason and "needs 13" in caught.value.reason


@pytest.mark.parametrize("target", ["sm_86", "sm_90"])
def test_the_scheduler_issues_them_thirteen_cycles_on(target):
    """bobc's own schedule of the same pairs (no control codes written) passes the checker, 13 cycles apart."""
    for reader, text in READERS.items():
        assembled = assemble(f"ISETP.GE.AND P0, PT, R4, R5, PT\n{text}\nEXIT\n", target)
        assert assembled.instructions[0].control.stall == 13, reader
        arch = target.replace("sm_", "SM")
        checker = Checker("kernel", arch)
        for ins in decode(assembled.code, arch):
            checker.issue(ins)
