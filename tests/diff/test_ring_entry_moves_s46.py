"""A submission's ring entry is no difference only when it moved with its submission (session 46
mutants12: golden.relocated_facts taking any changed ring entry of a paired submission as moved
survived the alignment tests -- a GPFIFO entry that changed place for another reason would have
been hidden).  Expected by hand: with a submission inserted first in b, a's submissions 0 and 1
are b's 1 and 2, so their ring entries 0 and 1 are 1 and 2 in b (each one place later, as its
submission: moved, a manifest fact); a's submission 1 whose entry is 0 in b went back while its
submission went on (a difference); with nothing inserted, an entry 1 -> 3 is a difference.
"""
from __future__ import annotations

from types import SimpleNamespace

from bobc.nvidia import decode
from bobc.nvidia.golden import LaunchAlignment, Relocation, SubmissionAlignment, region_keys, relocated_facts


def manifest(*identities):
    return {"launches": [], "submissions": [{"index": i, "identity": s, "launches": []} for i, s in enumerate(identities)],
            "sizes": {}, "qmd_layout": "none", "regions": []}


def ring(head, entry):
    return decode.Line(f"{head}.ring_entry", entry, "", "s", "submission")


def moved(ma, mb, entries_a, entries_b):
    launches = LaunchAlignment.of(ma, mb)
    submissions = SubmissionAlignment.of(ma, mb, launches, [], [])
    heads = [submissions.keys_a[i] for i in range(len(entries_a))]
    lines_a = [ring(h, e) for h, e in zip(heads, entries_a)]
    lines_b = [ring(h, e) for h, e in zip(heads, entries_b)]
    regions = region_keys(ma, mb)
    relocation = Relocation.of(ma, mb, launches, submissions, regions)
    found = relocated_facts(SimpleNamespace(manifest=ma), SimpleNamespace(manifest=mb), lines_a, lines_b,
                            relocation, launches, submissions, regions)
    return heads, found


def test_ring_entries_one_place_later_with_their_submissions_moved():
    heads, found = moved(manifest("s", "t"), manifest("x", "s", "t"), [0, 1], [1, 2])
    assert heads == ["submission[0->1]", "submission[1->2]"]
    assert {f"{h}.ring_entry" for h in heads} <= found.moved and {f"{h}.ring_entry" for h in heads} <= found.manifest


def test_a_ring_entry_that_went_back_while_its_submission_went_on_is_a_difference():
    heads, found = moved(manifest("s", "t"), manifest("x", "s", "t"), [0, 1], [1, 0])
    assert "submission[0->1].ring_entry" in found.moved
    assert "submission[1->2].ring_entry" not in found.moved and "submission[1->2].ring_entry" not in found.manifest


def test_a_ring_entry_changed_in_place_is_a_difference():
    heads, found = moved(manifest("s", "t"), manifest("s", "t"), [0, 1], [0, 3])
    assert heads == ["submission[0]", "submission[1]"]
    assert not found.moved and not found.manifest, found
