"""A fault over many launches lists the first SHOWN_ITEMS of them, how many more, and the last
(probe s36 scale finding 9): "launches never submitted: ..." listed all of them (8,000 launches
of LinReg left unsubmitted: one 175 KB line; 65,536: 1.4 MB), and so did a fault merged over
every launch alike.  docs/limits.md: one fault is one short line whatever the plan holds."""
from __future__ import annotations

import dataclasses

import synthetic_bob as bob
from bobc.certify.findings import SHOWN_ITEMS, Finding, merged
from bobc.certify.schedule import check_schedule


def test_launches_never_submitted_are_listed_within_the_bound():
    plan = bob.bob_plan()
    program = plan.program
    kept = tuple(s for s in program.submissions if s.launches[0] < 2)
    plan = dataclasses.replace(plan, program=dataclasses.replace(program, submissions=kept,
                                                                 submission_count=len(kept)))
    faults = [f.message for f in check_schedule(plan) if f.kind == "unsubmitted"]
    missing = list(range(2, len(program.launches)))
    assert len(missing) > SHOWN_ITEMS + 1
    shown = [f"{i} ({program.launches[i].identity})" for i in missing]
    assert faults == ["launches never submitted: " + ", ".join(shown[:SHOWN_ITEMS])
                      + f", ... {len(missing) - SHOWN_ITEMS - 1} more ..., {shown[-1]} ({len(missing)} launches)"]


def test_a_few_launches_never_submitted_are_all_listed():
    plan = bob.bob_plan()
    program = plan.program
    kept = tuple(s for s in program.submissions if s.launches[0] != 5)
    plan = dataclasses.replace(plan, program=dataclasses.replace(program, submissions=kept,
                                                                 submission_count=len(kept)))
    assert [f.message for f in check_schedule(plan) if f.kind == "unsubmitted"] == \
        [f"launches never submitted: 5 ({program.launches[5].identity})"]


def test_a_fault_alike_in_many_launches_is_one_short_line():
    faults = [Finding("stray-pointer", f"launch {i} (k) argument 1 (word 49): 0x10 points into no resident")
              for i in range(5000)]
    (one,) = merged(faults)
    assert one.message == ("launches " + ", ".join(str(i) for i in range(SHOWN_ITEMS))
                           + f", ... {5000 - SHOWN_ITEMS - 1:,} more ..., 4999 (5,000 alike) (k) argument 1 (word 49): "
                           "0x10 points into no resident")
    few = merged(faults[:3])
    assert [f.message for f in few] == ["launches 0, 1, 2 (3 alike) (k) argument 1 (word 49): 0x10 points into no "
                                        "resident"]
