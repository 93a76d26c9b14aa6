"""A variable-latency write behind a late read or a pending write of the same in-order queue needs no wait (probe s43
f64div): the control-code checker refused ptxas's own binary64 division code for it -- sm_90's div / rcp / sqrt
.rz / .rm / .rp .f64 load a's high word with `LDG.E R5, desc[UR4][R4.64]` on read scoreboard 0 and then overwrite
R4 with `LDG.E R4, ...` waiting on nothing; sm_86's rsqrt.approx.f64 slow path writes R4 by `DMUL` on SB0 and then,
on another path, by `DADD` waiting on nothing (tests/sass/test_f64_division_s43.py runs both with the checker on).

The reason is the queue's order (docs/simulator.md, the control-code checker: latencies.QUEUES -- the memory
queue's and sm_86's FP64 unit's results return in issue order): the later instruction is dispatched after the
earlier one has read its operands, and its result lands after the earlier one's.  A write of another queue, or
a fixed-latency write, is still refused, and so is sm_90's FP64 pair, whose unit is not variable latency there."""
from __future__ import annotations

import pytest

from bobc.sim.faults import Hazard
from tests.sim.test_checker_accepts_ptxas_s36 import _run

LATE_READ = """
[B------:R-:W-:-:S05] MOV R5, 0x0
[B------:R0:W1:-:S01] LDG.E R5, [R4.64]
[B------:R-:W2:-:S02] {writer}
[B-12---:R-:W-:-:S05] IADD3 R7, R4, R5, RZ"""


@pytest.mark.parametrize("target", ["sm_86", "sm_90"])
def test_a_load_may_overwrite_an_earlier_loads_late_read_address(target):
    _run(target, LATE_READ.format(writer="LDG.E R4, [R8.64]"))
    for other in ("MUFU.RCP R4, R6", "IADD3 R4, R6, 0x1, RZ"):
        with pytest.raises(Hazard) as caught:
            _run(target, LATE_READ.format(writer=other))
        assert "overwrites R4 before the instruction at 0x0020 has read it" in caught.value.reason


def test_an_fp64_result_may_replace_a_pending_one_on_sm_86():
    """sm_86's FP64 unit is variable latency and in order: DADD R4 behind a DMUL R4 still in flight (the reader
    waits on the later one).  MUFU (another queue) must wait."""
    _run("sm_86", """
[B------:R-:W0:-:S04] DMUL R4, R2, R2
[B------:R-:W1:-:S02] DADD R4, R2, R2
[B-1----:R-:W-:-:S05] IADD3 R7, R4, R5, RZ""")
    with pytest.raises(Hazard) as caught:
        _run("sm_86", """
[B------:R-:W0:-:S04] DMUL R4, R2, R2
[B------:R-:W1:-:S02] MUFU.RCP R4, R2
[B-1----:R-:W-:-:S05] IADD3 R7, R4, R5, RZ""")
    assert "overwrites R4 while the variable-latency write from 0x0010 (scoreboard 0) may still land" in caught.value.reason
