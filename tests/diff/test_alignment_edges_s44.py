"""Edges of `bobc diff`'s launch alignment and address relocation (session 44 mutants10 of
bobc.nvidia.golden: each case survived the diff tests as a mutant).  Expected values by hand:

- a = [grad, sgd], b = [grad, extra, sgd]: b's launch 2 is a's launch 1, one place later -- a moved
  run of one launch, (1, 2, 2, 3), said as "1 launch, at +1 place in b" (a single moved launch
  went unreported, and the shift's sign was reversed);
- a range of 0x100 bytes at 0x1000 in a that lies at 0x2000 in b: 0x10ff is 0x20ff, 0x1100 (the
  first byte past it) has no counterpart;
- a QMD offset and address that moved by other amounts (the base moved too), and methods at other
  places of their segments (the docstrings below).
"""
from __future__ import annotations

from types import SimpleNamespace

from bobc.nvidia.golden import LaunchAlignment, Relocation


def manifest(kernels):
    return {"launches": [{"index": i, "identity": k, "grid": [1, 1, 1], "block": [32, 1, 1]}
                         for i, k in enumerate(kernels)]}


def test_one_launch_after_an_insertion_is_a_moved_run_of_one_at_plus_one():
    a, b = manifest(["grad", "sgd"]), manifest(["grad", "extra", "sgd"])
    alignment = LaunchAlignment.of(a, b)
    assert alignment.keys_a == {0: "launch[0]", 1: "launch[1->2]"} and alignment.keys_b[1] == "launch[+1]"
    assert alignment.moved == [(1, 2, 2, 3)]
    lines = alignment.moved_lines(SimpleNamespace(manifest=a), SimpleNamespace(manifest=b), [], [])
    assert [(d.key, d.a, d.b) for d in lines] == [("launch[1]", "launch[1]", "launch[2]")]
    assert lines[0].meaning.startswith("1 launch, at +1 place in b"), lines[0].meaning


def test_a_launch_moved_back_is_at_minus_its_places():
    a, b = manifest(["extra", "more", "grad"]), manifest(["grad"])
    alignment = LaunchAlignment.of(a, b)
    lines = alignment.moved_lines(SimpleNamespace(manifest=a), SimpleNamespace(manifest=b), [], [])
    assert [d.meaning.split(";")[0] for d in lines] == ["1 launch, at -2 places in b"], lines


def test_an_address_one_past_a_range_has_no_counterpart():
    relocation = Relocation()
    relocation.add(0x1000, 0x100, 0x2000)
    assert relocation(0x1000) == 0x2000 and relocation(0x10FF) == 0x20FF
    assert relocation(0x1100) is None and relocation(0xFFF) is None


def test_a_qmd_offset_that_moved_otherwise_than_its_address_is_a_manifest_line():
    """A launch's QMD address is the QMD base plus its offset: with the address 0x300 later in b
    and the offset 0x200 later, the base moved too, so the offset's own change is a line; an offset
    0x300 later is the address's change, said once (by the address line)."""
    from bobc.nvidia.golden import Difference, manifest_differences

    def side(offset):
        return {"launches": [{"index": 0, "identity": "k", "qmd_offset": offset}]}

    found = [Difference("launch[0].qmd_address", "launch", "k", 0x1000, 0x1300, "")]
    lines = manifest_differences(side(0x0), side(0x200), found)
    assert [(d.key, d.a, d.b) for d in lines] == [("manifest.launch[0].qmd_offset", 0x0, 0x200)], lines
    assert manifest_differences(side(0x0), side(0x300), found) == []


def test_methods_at_other_places_in_their_segments_keep_their_own_places():
    """Two paired methods whose headers are at push +0x110 (segment at 0x100: +0x10) in a and
    +0x138 (segment at 0x120: +0x18) in b are not at one place of their segments, so neither is
    said as `header at segment +0x10`; at +0x130 in b (+0x10) they are."""
    from bobc.nvidia import decode
    from bobc.nvidia.golden import _segment_places

    def images(start):
        return SimpleNamespace(manifest={"prologue": {"push_offset": 0},
                                         "submissions": [{"index": 0, "push_offset": start}]})

    def line(at):
        return decode.Line("submission[0].push[3].SET_OBJECT", 0xC7C0, "", "s", "push",
                           where=f"subchannel 0, header at push +{at:#x}")

    a, b = images(0x100), images(0x120)
    kept_a, kept_b = _segment_places(a, b, [line(0x110)], [line(0x138)])
    assert (kept_a[0].where, kept_b[0].where) == ("subchannel 0, header at push +0x110",
                                                  "subchannel 0, header at push +0x138")
    same_a, same_b = _segment_places(a, b, [line(0x110)], [line(0x130)])
    assert same_a[0].where == same_b[0].where == \
        "subchannel 0, header at segment +0x10 (push +0x110 in a, +0x130 in b)"
