"""The control-code checker's rules for the opcodes the one-kernel simulator added
(docs/simulator.md, "The control-code checker"): in-order queues, decoupled and redirected
producers, the tensor cores."""
from __future__ import annotations

import pytest

from bobc.sim.faults import Hazard
from bobc.sim.kernel import run_kernel

from .conftest import shared_base

TARGETS = pytest.mark.parametrize("target", ["sm_86", "sm_90"])


def _run(target, body):
    base = shared_base(target)          # R0: a shared address past sm_90's system KiB (docs/targets.md)
    text = f"[B------:R-:W-:-:S05] MOV R0, {base + 0x4:#x}\n" + body + "\n[B------:R-:W-:-:S05] EXIT\n"
    return run_kernel(text, target, grid=1, block=32, params=[], shared_bytes=base + 64)


@TARGETS
def test_an_unscored_shared_load_is_complete_once_a_later_one_is_waited_on(target):
    _run(target, """
[B------:R-:W-:-:S01] LDS R2, [R0]
[B------:R-:W0:-:S01] LDS R3, [R0+0x4]
[B0-----:R-:W-:-:S04] IADD3 R4, R2, R3, RZ""")


@TARGETS
def test_waiting_on_another_queue_does_not_complete_an_unscored_load(target):
    with pytest.raises(Hazard) as caught:
        _run(target, """
[B------:R-:W-:-:S01] LDS R2, [R0]
[B------:R-:W0:-:S01] S2R R3, SR_TID.X
[B0-----:R-:W-:-:S04] IADD3 R4, R2, R3, RZ""")
    assert "reads R2" in caught.value.reason and "sets no scoreboard" in caught.value.reason


@TARGETS
def test_a_conversion_unit_result_is_held_to_the_scoreboard_it_sets(target):
    with pytest.raises(Hazard) as caught:
        _run(target, """
[B------:R-:W1:-:S01] POPC R2, R0
[B------:R-:W-:-:S04] IADD3 R4, R2, 0x1, RZ""")
    assert "before waiting on scoreboard 1" in caught.value.reason
    _run(target, """
[B------:R-:W1:-:S01] POPC R2, R0
[B-1----:R-:W-:-:S04] IADD3 R4, R2, 0x1, RZ""")


@TARGETS
def test_an_hmma_result_is_read_no_sooner_than_the_tables_allow(target):
    """HMMA.16816 is MMA_2x_collect in NVIDIA's Ampere table: an ALU reader needs 17 cycles.  (The
    HMMA's own stall stays at ptxas's 11: nvdisasm refuses some control values on HMMA.)"""
    with pytest.raises(Hazard) as caught:
        _run(target, """
[B------:R-:W-:-:S11] HMMA.16816.F32 R4, R8, R12, R4
[B------:R-:W-:-:S05] NOP
[B------:R-:W-:-:S04] IADD3 R20, R4, 0x1, RZ""")
    assert "reads R4 16 cycles after its producer at 0x0010 issued; an MMA (2x) result needs 17" in caught.value.reason
    _run(target, """
[B------:R-:W-:-:S11] HMMA.16816.F32 R4, R8, R12, R4
[B------:R-:W-:-:S06] NOP
[B------:R-:W-:-:S04] IADD3 R20, R4, 0x1, RZ""")


@TARGETS
def test_a_binary64_result_without_a_scoreboard_is_timed(target):
    """The FP64 unit is redirected: on sm_90 (fixed latency) a result with no scoreboard is timed
    (RedirectedFP64: 10 cycles to an ALU reader); on sm_86 it is variable latency and every
    result needs a scoreboard (tests/sim/test_hazard_rules_s33.py)."""
    with pytest.raises(Hazard) as caught:
        _run(target, """
[B------:R-:W-:-:S09] DADD R2, R4, R6
[B------:R-:W-:-:S04] IADD3 R20, R2, 0x1, RZ""")
    if target == "sm_86":
        assert "FP64 unit is variable latency" in caught.value.reason
        return
    assert "an FP64 result needs 10" in caught.value.reason


@TARGETS
def test_an_imad_carry_out_is_read_by_imad_x_four_cycles_on(target):
    """ptxas 13 reads a carry-out IMAD.WIDE.U32 / IMAD.HI predicate 4 cycles on from IMAD.X (an FMA-pipe
    reader; NVIDIA's Ampere tables, NAK PredLatencySM80: FMA writer -> FMA reader 4) and 5 from IADD3.X / SEL
    (-> a coupled reader 5): tests/sass/test_latency_probes.py.  The checker classed IMAD's predicate as an
    ALU's and refused ptxas's own `IMAD.WIDE.U32 R12, P0, ... -> IMAD.X R17, RZ, RZ, RZ, P0` at 4."""
    _run(target, """
[B------:R-:W-:-:S04] IMAD.WIDE.U32 R12, P0, R0, R0, R0
[B------:R-:W-:-:S05] IMAD.X R17, RZ, RZ, RZ, P0""")
    with pytest.raises(Hazard, match="P0 4 cycles"):
        _run(target, """
[B------:R-:W-:-:S04] IMAD.WIDE.U32 R12, P0, R0, R0, R0
[B------:R-:W-:-:S05] IADD3.X R17, RZ, RZ, RZ, P0, !PT""")
