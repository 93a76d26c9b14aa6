"""A submission's launch list or a launch's schedule that names the same launches by the same
indices is no relocated fact (session 46 mutants12: golden.relocated_facts taking every launch
list whose launches pair as moved, changed or not, survived the alignment tests; each such fact
would have been listed as 'the same places, moved' under `submission[i].addresses`).
Expected by hand: a = b = one launch k run by submission 0 ([0]) and scheduled by nothing: the
list [0] -> [0] names launch[0] on both sides, the same index -- nothing moved; with a launch x
inserted first in b, the list is [1] in b and names the same paired launch: moved.
"""
from __future__ import annotations

from types import SimpleNamespace

from bobc.nvidia import decode
from bobc.nvidia.golden import LaunchAlignment, Relocation, SubmissionAlignment, region_keys, relocated_facts


def launch(index, kernel):
    return {"index": index, "identity": kernel, "grid": [1, 1, 1], "block": [32, 1, 1], "schedules": []}


def manifest(launches, runs):
    return {"launches": launches, "submissions": [{"index": 0, "identity": "s", "launches": runs}],
            "sizes": {}, "qmd_layout": "none", "regions": []}


def found(ma, mb):
    launches = LaunchAlignment.of(ma, mb)
    submissions = SubmissionAlignment.of(ma, mb, launches, [], [])
    head = submissions.keys_a[0]
    lines_a = [decode.Line(f"{head}.launches", ma["submissions"][0]["launches"], "", "s", "submission")]
    lines_b = [decode.Line(f"{head}.launches", mb["submissions"][0]["launches"], "", "s", "submission")]
    regions = region_keys(ma, mb)
    relocation = Relocation.of(ma, mb, launches, submissions, regions)
    return head, relocated_facts(SimpleNamespace(manifest=ma), SimpleNamespace(manifest=mb), lines_a, lines_b,
                                 relocation, launches, submissions, regions)


def test_the_same_launch_list_is_no_relocated_fact():
    same = manifest([launch(0, "k")], [0])
    head, result = found(same, same)
    assert head == "submission[0]"
    assert not result.moved and not result.manifest and not result.renamed and not result.notes, result


def test_a_launch_list_naming_the_same_launch_at_its_new_index_moved():
    head, result = found(manifest([launch(0, "k")], [0]), manifest([launch(0, "x"), launch(1, "k")], [1]))
    assert f"{head}.launches" in result.moved and f"{head}.launches" in result.manifest, result
    assert "launch[0->1].schedules" not in result.moved           # [] -> []: nothing to move
