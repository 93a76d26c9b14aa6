"""A program with WARPSYNC drains every scoreboard at a forward branch, as one with BSSY / BSYNC does
(bobc.sass.schedule FORWARD_BRANCH: only a program whose control flow is BRA, EXIT and BAR hands a forward
branch's scoreboards to its target; tests/sass/test_schedule.py's checker, written from the hardware
contract, holds every branch and label of such a program to "nothing outstanding").  Its paths may run in an
order the hardware does not publish once a warp is diverged, so a wait at the target does not order what the
other path issued (tests/sass/test_checker_lanes_s43.py's rule).

test_schedule.py covers the rule with BSSY / BSYNC only; taking WARPSYNC out of CONVERGENCE_OPCODES passed
every scheduler test (probe s45 mutants11, S35).  Expected value by the rule: the branch's wait mask holds the
load's write scoreboard."""
from __future__ import annotations

import pytest

from tests.sass.test_schedule import check

BODY = ("    ULDC.64 UR4, c[0x0][memory_descriptor]\n"
        "    LDG.E R8, [R2.64]\n"
        "    ISETP.NE.AND P0, PT, R6, RZ, PT\n"
        "    @P0 BRA skip\n"
        "    LDG.E R9, [R4.64]\n"
        "    FADD R10, R8, R9\n"
        "skip:\n"
        "    WARPSYNC R12\n"
        "    FADD R11, R8, 1\n"
        "    EXIT\n")


@pytest.mark.parametrize("arch", ["sm_86", "sm_90"])
def test_a_forward_branch_in_a_program_with_warpsync_drains(arch):
    code = check(".kernel k\n.registers 24\n" + BODY, arch).instructions
    load, branch = code[1].control, code[3].control
    assert branch.wait_mask >> load.write_barrier & 1
