"""sm_86's `BRA.CONV URn, target` / `BRA.DIV URn, target` read URn (probe s45 hazards4 finding 1): before s45 the
checker took a branch's uniform register for no read, so a hand-written kernel branching on a REDUX result it
never waited for was accepted.  The expected placements are ptxas 13's own (tests/sass/data/corpus-sm_86.tsv,
tools/ptx_corpus/user_forms.ptx shfl_loaded_mask and tile_ballot): every such branch waits on the write scoreboard
of the REDUX that wrote its register.  A uniform-datapath result is held to NAK's Decoupled reader row, 9 cycles
(docs/simulator.md, "The control-code checker"), and the scheduler leaves those 9."""
from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

from bobc.sass import assemble
from bobc.sim.faults import Hazard
from bobc.sim.hazards import Checker
from bobc.sim.kernel import Pointer, run_kernel
from bobc.sim.sass_frontend import decode

REPO = Path(__file__).resolve().parents[2]
NO_SCOREBOARD = 7


def _control(hi: int) -> tuple[int, int]:
    """(write scoreboard, wait mask) of an instruction's high word (bits 110..112 and 116..121 of the 128)."""
    return hi >> 46 & 7, hi >> 52 & 0x3F


def test_ptxas_waits_on_the_redux_before_every_branch_on_its_register():
    """The independent evidence: in ptxas's sm_86 -O3 code each BRA.CONV / BRA.DIV URn is reached only after a wait
    on the scoreboard the REDUX that last wrote URn set (counted in its straight-line stream, the REDUX's own
    address excluded)."""
    kernels: dict = {}
    for line in (REPO / "tests/sass/data/corpus-sm_86.tsv").read_text().splitlines():
        text, _lo, hi, ref = line.split("\t")
        name, entry, level, offset = ref.rsplit(":", 3)
        if level == "-O3":
            kernels.setdefault((name, entry), []).append((int(offset, 16), text, int(hi, 16)))
    branches = 0
    for rows in kernels.values():
        rows.sort()
        for k, (_, text, _hi) in enumerate(rows):
            m = re.search(r"BRA\.(CONV|DIV) (UR\d+),", text)
            if not m:
                continue
            writer = max(j for j in range(k) if re.match(rf"(@!?P\d )?REDUX\.\w+ {m.group(2)},", rows[j][1]))
            scoreboard, _ = _control(rows[writer][2])
            assert scoreboard != NO_SCOREBOARD
            assert any(_control(rows[j][2])[1] >> scoreboard & 1 for j in range(writer + 1, k + 1)), text
            branches += 1
    assert branches >= 8


def _check(body: str) -> None:
    """`body` (SASS with control codes) assembled for sm_86 and issued through the checker in address order."""
    text = "[B------:R-:W-:-:S05] MOV R7, 0xffffffff\n" + body + "\nL:\n[B------:R-:W-:-:S05] EXIT\n"
    checker = Checker("kernel", "SM86")
    for ins in decode(assemble(text, "sm_86").code, "SM86"):
        checker.issue(ins)


@pytest.mark.parametrize("branch", ["BRA.CONV", "BRA.DIV"])
def test_a_branch_on_a_redux_result_waits_on_its_scoreboard(branch):
    # ptxas's placement (shfl_loaded_mask 0x0080 / 0x00a0: `REDUX.OR UR6, R7` on W1, the branch waiting on SB1)
    _check(f"[B------:R-:W1:-:S02] REDUX.OR UR6, R7\n[B-1----:R-:W-:-:S05] {branch} UR6, `(L)")
    with pytest.raises(Hazard) as caught:
        _check(f"[B------:R-:W1:-:S02] REDUX.OR UR6, R7\n[B------:R-:W-:-:S05] {branch} UR6, `(L)")
    assert "reads UR6 before waiting on scoreboard 1" in caught.value.reason
    with pytest.raises(Hazard) as caught:
        _check(f"[B------:R-:W-:Y:S15] REDUX.OR UR6, R7\n[B------:R-:W-:-:S05] {branch} UR6, `(L)")
    assert "reads UR6, written at 0x0010 by a variable-latency instruction that sets no scoreboard" \
        in caught.value.reason


def test_a_branch_reads_a_uniform_datapath_result_nine_cycles_on():
    """NAK's URegLatencySM80: a Udp writer -> a vector Decoupled reader (a branch is one) 9 -- the rule ptxas meets
    with equality for MUFU / POPC / STS readers (docs/simulator.md)."""
    def body(stall):
        return f"[B------:R-:W-:-:S{stall:02d}] ULOP3.LUT UR6, URZ, URZ, URZ, 0xff, !UPT\n" \
               "[B------:R-:W-:-:S05] BRA.DIV UR6, `(L)"
    _check(body(9))
    with pytest.raises(Hazard) as caught:
        _check(body(8))
    assert "reads UR6 8 cycles after" in caught.value.reason and "a uniform-datapath result needs 9" \
        in caught.value.reason


def test_the_scheduler_leaves_a_branch_the_cycles_the_checker_holds_it_to():
    """Without written control codes the scheduler places the branch (9 cycles on, a wait on the REDUX), and the
    checker accepts what it chose (8 cycles after the ULOP3 before s45)."""
    for producer in ("ULOP3.LUT UR6, URZ, URZ, URZ, 0xff, !UPT", "REDUX.OR UR6, R7"):
        code = assemble(f"MOV R7, 0xffffffff\n{producer}\nBRA.DIV UR6, `(L)\nL:\nEXIT\n", "sm_86").code
        checker = Checker("kernel", "SM86")
        for ins in decode(code, "SM86"):
            checker.issue(ins)


def test_a_hand_written_kernel_is_refused_at_the_branch_line():
    source = (".kernel k\n"
              "[B------:R-:W-:-:S02] ULDC.64 UR4, c[0x0][memory_descriptor]\n"
              "[B------:R-:W0:-:S01] LDC.64 R2, c[0x0][RZ+param+0x0]\n"
              "[B------:R-:W-:-:S04] MOV R7, 0xffffffff\n"
              "[B------:R-:W1:-:S02] REDUX.OR UR6, R7\n"
              "[B0-----:R-:W-:-:S05] BRA.CONV UR6, `(L)\n"
              "[B------:R-:W-:-:S05] STG.E [R2.64], R7\n"
              "L:\n"
              "[B------:R-:W-:-:S05] EXIT\n")
    with pytest.raises(Hazard) as caught:
        run_kernel(source, "sm_86", grid=1, block=32, params=[Pointer("out")],
                   buffers={"out": np.zeros(32, np.uint32)})
    assert caught.value.span.line == 6
    assert "BRA.CONV UR6" in caught.value.message and "before waiting on scoreboard 1" in caught.value.message
    run_kernel(source.replace("[B0-----:R-:W-:-:S05] BRA", "[B01----:R-:W-:-:S05] BRA"), "sm_86", grid=1, block=32,
               params=[Pointer("out")], buffers={"out": np.zeros(32, np.uint32)})
