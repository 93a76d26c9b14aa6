"""How `bobc diff` judges a paired address that did not simply move with what it names
(golden.relocated_facts' judge: session 46 mutants12 -- dropping each of these three branches
survived every diff test, whose images never reach them).  Each case is two hand-made manifests
and one segment method, SEND_PCAS_A, whose value is a QMD address >> 8 (clc6c0qmd.h: the QMD's
address in 256-byte units), so 0x10 names the QMD at 0x1000.  Expected by hand from the rule:

- a different address that names another launch's QMD in b than a's names in a (and is not where
  a's launch moved) is a note naming both;
- the same value whose launch moved away in b (0x1000 -> 0x1100), so that in b it names nothing
  bobc placed, is renamed -- the same bits, another meaning;
- the same value naming a launch only in a and another launch only in b (neither moved: nothing
  relocates it) is renamed too, since each side's value names a different kernel's QMD.
"""
from __future__ import annotations

from types import SimpleNamespace

from bobc.nvidia import decode
from bobc.nvidia.golden import LaunchAlignment, Relocation, SubmissionAlignment, region_keys, relocated_facts

PCAS = "submission[0].push[3].SEND_PCAS_A"


def launch(index, kernel, qmd):
    return {"index": index, "identity": kernel, "grid": [1, 1, 1], "block": [32, 1, 1], "qmd_address": qmd}


def manifest(*launches):
    return {"launches": list(launches), "submissions": [{"index": 0, "identity": "s", "launches": [0]}],
            "sizes": {"qmd_record": 0x100, "parameter_block": 0x100}, "qmd_layout": "none", "regions": []}


def pcas(value):
    return decode.Line(PCAS, value, "", "s", "push", raw=0x2000_0000)


def facts(ma, mb, value_a, value_b):
    lines_a, lines_b = [pcas(value_a)], [pcas(value_b)]
    launches = LaunchAlignment.of(ma, mb)
    submissions = SubmissionAlignment.of(ma, mb, launches, lines_a, lines_b)
    regions = region_keys(ma, mb)
    relocation = Relocation.of(ma, mb, launches, submissions, regions)
    return relocated_facts(SimpleNamespace(manifest=ma), SimpleNamespace(manifest=mb), lines_a, lines_b,
                           relocation, launches, submissions, regions)


def test_an_address_naming_another_launch_in_b_is_a_note_naming_both():
    a = b = manifest(launch(0, "k", 0x1000), launch(1, "j", 0x1200))
    found = facts(a, b, 0x10, 0x12)
    assert found.notes == {PCAS: "names launch[0]'s QMD (k) in a, launch[1]'s QMD (j) in b"}, found
    assert PCAS not in found.moved and PCAS not in found.renamed


def test_an_address_naming_nothing_on_either_side_is_no_note():
    a = b = manifest(launch(0, "k", 0x1000))
    found = facts(a, b, 0x20, 0x30)              # 0x2000 and 0x3000: no QMD, segment or region there
    assert PCAS not in found.notes and PCAS not in found.renamed and PCAS not in found.moved, found


def test_the_same_address_whose_launch_moved_away_is_renamed():
    found = facts(manifest(launch(0, "k", 0x1000)), manifest(launch(0, "k", 0x1100)), 0x10, 0x10)
    assert found.renamed.get(PCAS) == ("the same value, which names launch[0]'s QMD (k) in a, "
                                       "nothing bobc placed in b"), found
    assert "launch[0].qmd_address" in found.moved          # the launch's own address moved with it


def test_the_same_address_naming_other_kernels_is_renamed():
    found = facts(manifest(launch(0, "gone", 0x1000)), manifest(launch(0, "new", 0x1000)), 0x10, 0x10)
    assert PCAS in found.renamed and "(gone) in a" in found.renamed[PCAS] and "(new) in b" in found.renamed[PCAS], found


def test_the_same_address_naming_the_same_launch_is_nothing():
    a = b = manifest(launch(0, "k", 0x1000))
    found = facts(a, b, 0x10, 0x10)
    assert PCAS not in found.renamed and PCAS not in found.notes and PCAS not in found.moved, found
