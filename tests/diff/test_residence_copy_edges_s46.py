"""What a resident plan's program-table copy holds, read at its last byte (session 46 mutants12:
golden.Relocation.of and _Places taking only ranges ending strictly before the table's end, so a
launch's parameter block that is the table's last 0x100 bytes had no counterpart in the copy).
Expected by hand: the table is [0x10000, 0x10200) in a (copy at 0x80000) and [0x20000, 0x20200)
in b (copy at 0x90000); launch 0's parameter block is [0x10100, 0x10200) in a, [0x20100, 0x20200)
in b, so in the copies [0x80100, 0x80200) is [0x90100, 0x90200): 0x801FF -> 0x901FF, and 0x80200
(past the copy) has no counterpart; 0x80100 names the block in the residence.
"""
from __future__ import annotations

from bobc.nvidia.golden import LaunchAlignment, Relocation, SubmissionAlignment, _Places, region_keys


def manifest(program, parameter, copy):
    return {"launches": [{"index": 0, "identity": "k", "grid": [1, 1, 1], "block": [32, 1, 1],
                          "parameter_address": parameter}],
            "submissions": [], "regions": [], "qmd_layout": "none",
            "bases": {"program": program}, "sizes": {"parameter_block": 0x100, "program": 0x200},
            "residence": {"base": copy, "program_bytes": 0x200}}


def test_a_block_ending_at_the_tables_end_is_relocated_in_the_copy_too():
    a, b = manifest(0x10000, 0x10100, 0x80000), manifest(0x20000, 0x20100, 0x90000)
    launches = LaunchAlignment.of(a, b)
    submissions = SubmissionAlignment.of(a, b, launches, [], [])
    relocation = Relocation.of(a, b, launches, submissions, region_keys(a, b))
    assert relocation(0x101FF) == 0x201FF
    assert relocation(0x80100) == 0x90100 and relocation(0x801FF) == 0x901FF
    assert relocation(0x80200) is None


def test_a_block_ending_at_the_tables_end_is_named_in_the_copy():
    places = _Places(manifest(0x10000, 0x10100, 0x80000), {0: "launch[0]"}, {}, {})
    assert places(0x801FF) == "launch[0]'s parameter block (k) in the residence"
    assert places(0x101FF) == "launch[0]'s parameter block (k)"
    assert places(0x80200) is None
