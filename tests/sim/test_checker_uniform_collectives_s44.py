"""The checker's rules for REDUX, R2UR's predicate and a uniform predicate's guard (probe s44 hazards3),
each from NVIDIA's Ampere tables as Mesa NAK publishes them (src/nouveau/compiler/nak/
sm80_instr_latencies.rs) and met by ptxas 13's own code (tools/ptx_corpus/user_forms.ptx, refused
before s44), next to the hazard each still refuses (docs/simulator.md, "The control-code checker")."""
from __future__ import annotations

import pytest

from bobc.sass import assemble
from bobc.sim.faults import Hazard
from bobc.sim.hazards import Checker
from bobc.sim.sass_frontend import decode

TARGETS = pytest.mark.parametrize("target", ["sm_86", "sm_90"])


def _yield(stall: int) -> str:
    """The yield field a stall takes: S12 and above are written with Y (bobc.sass.syntax)."""
    return "Y" if stall > 11 else "-"


def _run(target, body):
    """`body` (SASS with its control codes, after R0 is set) assembled and issued through the
    checker in order (straight-line code: the issue order is the address order)."""
    text = "[B------:R-:W-:-:S05] MOV R0, 0x4\n" + body + "\n[B------:R-:W-:-:S05] EXIT\n"
    arch = target.replace("sm_", "SM")
    checker = Checker("kernel", arch)
    for ins in decode(assemble(text, target).code, arch):
        checker.issue(ins)


# --- REDUX reads its register in the decoupled unit: NAK's RegLatencySM80 has `Op::R2UR | Op::Redux =>
# if reader Decoupled`, and its Decoupled reader row gives a CoupledFMA (or CoupledAlu) writer 4.  ptxas 13
# issues `REDUX.MAX UR4, R2` 4 cycles after `IMAD.IADD R2, R6, 0x1, R3` (atomic_loops, both targets)

@TARGETS
def test_redux_reads_an_fma_result_four_cycles_on(target):
    def body(stall):
        return f"""
[B------:R-:W-:-:S{stall:02d}] IMAD.IADD R2, R0, 0x1, R0
[B------:R-:W0:-:S02] REDUX.MAX UR4, R2
[B0-----:R-:W-:-:S05] IMAD.U32 R9, RZ, RZ, UR4"""
    _run(target, body(4))
    with pytest.raises(Hazard) as caught:
        _run(target, body(3))
    assert "reads R2 3 cycles after" in caught.value.reason and "an FMA result needs 4" in caught.value.reason


# --- REDUX's uniform result is variable latency (NAK: URegLatencySM80 ToUr, which needs_scoreboards): ptxas
# sets a write scoreboard on every -O3 REDUX and waits on it.  Before s44 the checker timed it as a ULDC's,
# 2 cycles, so a read that never waited passed.

@TARGETS
def test_a_redux_result_is_held_to_its_scoreboard(target):
    def body(wait, scoreboard="W0"):
        return f"""
[B------:R-:{scoreboard}:-:S02] REDUX.SUM UR4, R0
[{wait}:R-:W-:-:S05] IMAD.U32 R9, RZ, RZ, UR4"""
    _run(target, body("B0-----"))
    with pytest.raises(Hazard) as caught:
        _run(target, body("B------"))
    assert "reads UR4 before waiting on scoreboard 0" in caught.value.reason
    with pytest.raises(Hazard) as caught:
        _run(target, body("B------", "W-"))
    assert "reads UR4, written at 0x0010 by a variable-latency instruction that sets no scoreboard" in caught.value.reason


# --- sm_86's R2UR is variable latency, its predicate included (PredLatencySM80: R2UR => Decoupled): ptxas's
# `R2UR P0, URZ, R7` sets W4 and `@!P0 BRA.CONV UR6, ...` waits on SB4 2 cycles on (shfl_loaded_mask); the
# checker timed the predicate as an ALU result's 13 before s44, ignoring the scoreboard

def test_an_sm86_r2ur_predicate_is_held_to_its_scoreboard():
    def body(wait, scoreboard="W4"):
        return f"""
[B------:R-:W4:-:S01] REDUX.OR UR6, R0
[B------:R-:{scoreboard}:-:S02] R2UR P0, URZ, R0
[{wait}:R-:W-:-:S05] @!P0 BRA.CONV UR6, 0x50
[B------:R-:W-:-:S05] NOP"""
    _run("sm_86", body("B----4-"))
    with pytest.raises(Hazard) as caught:                 # no wait: even 13 cycles on
        _run("sm_86", body("B------").replace("-:S02] R2UR", "Y:S13] R2UR"))
    assert "reads P0 before waiting on scoreboard 4" in caught.value.reason
    with pytest.raises(Hazard) as caught:
        _run("sm_86", body("B----4-", "W-"))
    assert "reads P0, written at 0x0020 by a variable-latency instruction that sets no scoreboard" in caught.value.reason


# --- a uniform predicate guards an instruction 11 cycles after the uniform-datapath instruction that wrote it
# (UPredLatencySM80: UGuard after Udp 11; ptxas 13 guards `@UP1 UIADD3` 12 cycles after UISETP.GE.AND.EX,
# param_compares, both targets); a vector predicate's guard still needs 13 (PredLatencySM80 Guard)

@TARGETS
def test_a_uniform_predicate_guards_eleven_cycles_after_the_uniform_datapath(target):
    def body(stall):
        return f"""
[B------:R-:W-:-:S02] ULDC UR4, c[0x0][0x0]
[B------:R-:W-:{_yield(stall)}:S{stall:02d}] UISETP.GT.AND UP1, UPT, UR4, URZ, UPT
[B------:R-:W-:-:S05] @UP1 UIADD3 UR8, UR4, URZ, URZ"""
    _run(target, body(12))                                # ptxas's placement
    _run(target, body(11))
    with pytest.raises(Hazard) as caught:
        _run(target, body(10))
    assert "reads UP1 10 cycles after" in caught.value.reason and "a uniform-datapath result needs 11" in caught.value.reason


@TARGETS
def test_a_vector_predicate_still_guards_thirteen_cycles_after_a_compare(target):
    with pytest.raises(Hazard) as caught:
        _run(target, """
[B------:R-:W-:Y:S12] ISETP.GE.AND P1, PT, R0, RZ, PT
[B------:R-:W-:-:S05] @P1 IADD3 R8, R0, R0, RZ""")
    assert "reads P1 12 cycles after" in caught.value.reason and "an ALU result needs 13" in caught.value.reason
