"""A latch id that differs is no difference only when, on both sides, it names the same waiting
launch (session 46 mutants12: golden.relocated_facts taking two ids that no launch waits on --
None on both sides -- as the same waiter survived the alignment tests, and hid the change).
V04_00 QMDs (sm_90) carry ARRIVE_AT_LATCH_ID / WAIT_ON_LATCH_ID; the facts below are hand-made
decoded lines.  Expected by hand: launch 0 arriving at 5 which launch 1 waits on in a, and at 7
which launch 1 waits on in b, names the same edge (both ids moved); an id 5 -> 7 that no launch
waits on in a or b names no edge, and one waited on by launch 1 in a and launch 2 in b names
another: each is a difference.
"""
from __future__ import annotations

from types import SimpleNamespace

from bobc.nvidia import decode
from bobc.nvidia.golden import LaunchAlignment, Relocation, SubmissionAlignment, region_keys, relocated_facts

MANIFEST = {"launches": [], "submissions": [], "sizes": {}, "qmd_layout": "V04_00", "regions": []}


def latch(launch, name, value):
    return decode.Line(f"launch[{launch}].{name}", value, "", "k", "launch")


def found(lines_a, lines_b):
    launches = LaunchAlignment.of(MANIFEST, MANIFEST)
    submissions = SubmissionAlignment.of(MANIFEST, MANIFEST, launches, lines_a, lines_b)
    regions = region_keys(MANIFEST, MANIFEST)
    relocation = Relocation.of(MANIFEST, MANIFEST, launches, submissions, regions)
    return relocated_facts(SimpleNamespace(manifest=MANIFEST), SimpleNamespace(manifest=MANIFEST), lines_a, lines_b,
                           relocation, launches, submissions, regions).moved


def test_an_id_naming_the_same_waiting_launch_moved():
    moved = found([latch(0, "arrives_at_latch", 5), latch(1, "waits_on_latch", 5)],
                  [latch(0, "arrives_at_latch", 7), latch(1, "waits_on_latch", 7)])
    assert {"launch[0].arrives_at_latch", "launch[0].qmd.ARRIVE_AT_LATCH_ID",
            "launch[1].waits_on_latch", "launch[1].qmd.WAIT_ON_LATCH_ID"} <= moved, moved


def test_an_id_no_launch_waits_on_is_a_difference():
    moved = found([latch(0, "arrives_at_latch", 5)], [latch(0, "arrives_at_latch", 7)])
    assert not moved, moved


def test_an_id_waited_on_by_another_launch_is_a_difference():
    moved = found([latch(0, "arrives_at_latch", 5), latch(1, "waits_on_latch", 5), latch(2, "waits_on_latch", 9)],
                  [latch(0, "arrives_at_latch", 7), latch(1, "waits_on_latch", 8), latch(2, "waits_on_latch", 7)])
    assert "launch[0].arrives_at_latch" not in moved, moved
