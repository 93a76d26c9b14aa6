"""A submission's semaphore address is no difference only when it moved with its submission, one slot
a place (session 47 leftovers9; session 46 mutants12's J20, left: golden.Relocation.of adding every
paired submission's semaphore range, whatever its slot, survived the alignment tests).  The rule
(commit a9dd18a9, probe s29 diffsub): the semaphore slot is the plan's own; it follows its submission
only where the submission moved and the slot moved with it, (j - i) slots of 8 bytes.  Expected by
hand, 8-byte slots at 0x2000: a = [s, t], b = [x, s, t] with slots 0x2000 / 0x2008 -> 0x2008 / 0x2010
(each one place later with its submission): moved; a = [s, t], b = [s, t] with t's slot 0x2008 ->
0x2010 (in place): a difference; a = [s, t], b = [x, s, t] with every slot the shared 0x2000 in a and
0x3000 in b (the plan's one slot moved, no submission's place): a difference."""
from __future__ import annotations

from types import SimpleNamespace

from bobc.nvidia import decode
from bobc.nvidia.golden import LaunchAlignment, Relocation, SubmissionAlignment, region_keys, relocated_facts


def manifest(identities, slots):
    return {"launches": [], "submissions": [{"index": i, "identity": s, "launches": [], "semaphore_address": slot}
                                            for i, (s, slot) in enumerate(zip(identities, slots))],
            "semaphore": {"bytes": 8}, "sizes": {}, "qmd_layout": "none", "regions": []}


def judged(ma, mb):
    launches = LaunchAlignment.of(ma, mb)
    submissions = SubmissionAlignment.of(ma, mb, launches, [], [])
    of_b = {key: j for j, key in submissions.keys_b.items()}
    heads = [submissions.keys_a[i] for i in range(len(ma["submissions"]))]
    lines_a = [decode.Line(f"{h}.semaphore_address", ma["submissions"][i]["semaphore_address"], "", "s", "submission")
               for i, h in enumerate(heads)]
    lines_b = [decode.Line(f"{h}.semaphore_address", mb["submissions"][of_b[h]]["semaphore_address"], "", "s",
                           "submission") for h in heads]
    regions = region_keys(ma, mb)
    relocation = Relocation.of(ma, mb, launches, submissions, regions)
    found = relocated_facts(SimpleNamespace(manifest=ma), SimpleNamespace(manifest=mb), lines_a, lines_b,
                            relocation, launches, submissions, regions)
    return heads, relocation, found


def test_slots_one_place_later_with_their_submissions_moved_s47():
    heads, relocation, found = judged(manifest("st", [0x2000, 0x2008]), manifest("xst", [0x2000, 0x2008, 0x2010]))
    assert heads == ["submission[0->1]", "submission[1->2]"]
    assert relocation(0x2000) == 0x2008 and relocation(0x2008) == 0x2010
    assert {f"{h}.semaphore_address" for h in heads} <= found.moved


def test_a_slot_changed_in_place_is_a_difference_s47():
    heads, relocation, found = judged(manifest("st", [0x2000, 0x2008]), manifest("st", [0x2000, 0x2010]))
    assert heads == ["submission[0]", "submission[1]"]
    assert relocation(0x2008) is None
    assert "submission[1].semaphore_address" not in found.moved, found


def test_the_plans_shared_slot_moved_is_a_difference_s47():
    heads, relocation, found = judged(manifest("st", [0x2000, 0x2000]), manifest("xst", [0x3000] * 3))
    assert relocation(0x2000) is None
    assert not {f"{h}.semaphore_address" for h in heads} & found.moved, found
