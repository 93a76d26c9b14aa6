"""A fixed-latency write over a slower fixed-latency result still landing (probe s45 hazards4 finding 4): before s45
`HMMA.16816.F32 R12, ...` then `MOV R12, 0x7` a cycle on was accepted and the simulator kept the MOV's 7, where
the GPU writes the HMMA's result last (NVIDIA's Ampere tables as NAK publishes them: an HMMA.16816 result is read
by an ALU 17 cycles after its issue, a MOV's 4 -- docs/simulator.md, "The control-code checker").  The later write
is held to land no earlier than the earlier: 17 - 4 = 13 cycles (not a cycle after: ptxas's sm_90 f64 division,
tools/ptx_corpus/user_forms_s45.ptx f64_div_rn, overwrites an FP64 result exactly 10 - 4 = 6 cycles on), and every
ptxas kernel stays accepted (tests/sim/test_checker_accepts_ptxas_s36.py)."""
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


def _hmma_then_move(stall: int) -> str:
    y = "Y" if stall > 11 else "-"
    return f"[B------:R-:W-:{y}:S{stall:02d}] HMMA.16816.F32 R12, R4, R8, R12\n[B------:R-:W-:-:S05] MOV R12, 0x7\n"


@TARGETS
def test_a_move_over_an_mma_result_waits_until_it_has_landed(target):
    _check(target, _hmma_then_move(13))
    with pytest.raises(Hazard) as caught:
        _check(target, _hmma_then_move(12))
    assert "overwrites R12 12 cycles after an MMA (2x) instruction at 0x00d0 wrote it" in caught.value.reason
    assert "a later write needs 13 cycles" in caught.value.reason
    assert caught.value.hint.startswith("issue it 1 cycle later: raise the stall of the instruction issued before it "
                                        "(0x00d0) from S12 to Y:S13")


@TARGETS
def test_a_write_after_the_mma_result_is_read_is_not_held(target):
    """An MMA reading its own accumulator again, and an ALU reading the result at its 17 cycles then overwriting it,
    are ordered already: the rule holds only a write over a result no one has waited for."""
    _check(target, "[B------:R-:W-:Y:S15] HMMA.16816.F32 R12, R4, R8, R12\n[B------:R-:W-:-:S03] NOP\n"
                   "[B------:R-:W-:-:S05] IADD3 R12, R12, 0x1, RZ\n")
    _check(target, "[B------:R-:W-:Y:S15] HMMA.16816.F32 R12, R4, R8, R12\n[B------:R-:W-:-:S03] NOP\n"
                   "[B------:R-:W-:-:S05] HMMA.16816.F32 R12, R4, R8, R12\n")


def test_sm90_fp64_result_is_held_the_same_way():
    """sm_90's FP64 unit is fixed latency (docs/simulator.md): a DADD result is read by an ALU 10 cycles on, so a MOV
    over it waits 10 - 4 = 6, as ptxas's own f64 division does (user_forms_s45.ptx f64_div_rn, -O3)."""
    def body(stall):
        return (f"[B------:R-:W-:-:S{stall:02d}] DADD R6, R4, R8\n[B------:R-:W-:-:S05] MOV R6, 0x7\n")
    _check("sm_90", body(6))
    with pytest.raises(Hazard) as caught:
        _check("sm_90", body(5))
    assert "overwrites R6 5 cycles after an FP64 instruction at 0x00d0 wrote it" in caught.value.reason
