"""A QMD field holding an address is no difference only when b's field is exactly where a's
address moved (session 46 mutants12: golden.relocated_facts taking any changed address field
whose a-side address relocates as moved survived the alignment and cross-target QMD tests -- a
QMD pointing into the middle of the moved kernel would have been hidden).  One hand-made V03_00
QMD per side (bobc's own QMD codec writes PROGRAM_ADDRESS_LOWER/UPPER: the program address is
lower | upper << 32, clc6c0qmd.h); the kernel's code moves from 0x10000 to 0x20000 (0x100
bytes).  Expected by hand: 0x20000 moved (its lower half, the one that changed); 0x20080 does
not; 0x30000 is a note (a's names the code, b's nothing); the code moving from 2^32 to 2^33 is a
move of the upper half alone.
"""
from __future__ import annotations

from types import SimpleNamespace

from bobc.nvidia.golden import LaunchAlignment, Relocation, SubmissionAlignment, region_keys, relocated_facts
from bobc.nvidia.qmd import QMD

LOWER, UPPER = "launch[0].qmd.PROGRAM_ADDRESS_LOWER", "launch[0].qmd.PROGRAM_ADDRESS_UPPER"


def images(code, program):
    raw = QMD("V03_00").set("PROGRAM_ADDRESS_LOWER", program & 0xFFFFFFFF).set("PROGRAM_ADDRESS_UPPER", program >> 32) \
        .to_bytes()
    manifest = {"launches": [{"index": 0, "identity": "k", "grid": [1, 1, 1], "block": [32, 1, 1], "qmd_offset": 0}],
                "submissions": [], "sizes": {"qmd_record": len(raw)}, "qmd_layout": "V03_00", "bases": {"qmd": 0x1000},
                "regions": [{"index": 0, "identity": "k", "address": code, "size": 0x100}]}
    return SimpleNamespace(manifest=manifest, qmd=raw)


def found(a, b):
    ma, mb = a.manifest, b.manifest
    launches = LaunchAlignment.of(ma, mb)
    submissions = SubmissionAlignment.of(ma, mb, launches, [], [])
    regions = region_keys(ma, mb)
    relocation = Relocation.of(ma, mb, launches, submissions, regions)
    return relocated_facts(a, b, [], [], relocation, launches, submissions, regions)


def test_a_program_address_where_the_code_moved_moved():
    assert LOWER in found(images(0x10000, 0x10000), images(0x20000, 0x20000)).moved


def test_a_program_address_inside_the_moved_code_but_elsewhere_is_a_difference():
    result = found(images(0x10000, 0x10000), images(0x20000, 0x20080))
    assert LOWER not in result.moved and UPPER not in result.moved, result


def test_a_program_address_naming_nothing_in_b_is_a_note():
    result = found(images(0x10000, 0x10000), images(0x20000, 0x30000))
    assert LOWER not in result.moved
    assert result.notes.get(LOWER) == "names region[0]'s code (k) in a, nothing bobc placed in b", result


def test_only_the_half_that_changed_moved():
    result = found(images(1 << 32, 1 << 32), images(1 << 33, 1 << 33))
    assert UPPER in result.moved and LOWER not in result.moved, result
