"""IMAD.HI's addend is the pair Rc+1:Rc (nvdisasm's life ranges; ptxas's mad.hi.u32 d, a, b, c puts c in the high word,
the low word zero), and the checker held both words to the reader's ALU latency: ptxas's own sm_90 code for
mad.hi.cc.u32 then madc.lo.u32 (tools/ptx_corpus/user_forms_s46.ptx carry_hi_madc, -O3) is `MOV R5, R6` and 3 cycles
on `IMAD.HI.U32 R4, P0, R0, UR4, R4`, which the checker refused ("reads R5 3 cycles after its producer ...; an ALU
result needs 5").  The high word is read late, as IMAD.WIDE's is: NVIDIA's Ampere tables as NAK publishes them
(sm80_instr_latencies.rs, IMADWideReadCH: an ALU result 3 cycles on) and ptxas's 3 agree; the low word and A / B keep
the ALU's 5 (ptxas reads an IMAD.HI addend's low word written by a MOV 5 cycles on at the least, corpus-sm_*.tsv)."""
from __future__ import annotations

import pytest

from bobc.sass import assemble
from bobc.sim.faults import Hazard
from bobc.sim.hazards import Checker
from bobc.sim.sass_frontend import decode

TARGETS = pytest.mark.parametrize("target", ["sm_86", "sm_90"])
ZEROS = "".join(f"[B------:R-:W-:-:S04] MOV R{r}, RZ\n" for r in range(4, 16)) + "[B------:R-:W-:-:S07] MOV R16, RZ\n"


def _check(target: str, body: str) -> None:
    arch = target.replace("sm_", "SM")
    checker = Checker("kernel", arch)
    for ins in decode(assemble(ZEROS + body + "[B------:R-:W-:-:S05] EXIT\n", target).code, arch):
        checker.issue(ins)


def _move_then_hi(moved: int, stall: int) -> str:
    return (f"[B------:R-:W-:-:S{stall:02d}] MOV R{moved}, R6\n"
            "[B------:R-:W-:-:S05] IMAD.HI.U32 R4, P0, R8, R9, R10\n")


@TARGETS
def test_the_addends_high_word_is_read_3_cycles_after_an_alu_result_s47(target):
    _check(target, _move_then_hi(11, 3))          # ptxas's placement (sm_90 carry_hi_madc)
    with pytest.raises(Hazard) as caught:
        _check(target, _move_then_hi(11, 2))
    assert "reads R11 2 cycles after its producer" in caught.value.reason


@TARGETS
def test_the_addends_low_word_and_the_factors_keep_the_alu_latency_s47(target):
    for moved in (10, 8, 9):
        _check(target, _move_then_hi(moved, 5))
        with pytest.raises(Hazard) as caught:
            _check(target, _move_then_hi(moved, 4))
        assert f"reads R{moved} 4 cycles after its producer" in caught.value.reason
