"""Edges of `bobc diff`'s launch alignment and address relocation (session 44 mutants10 of
bobc.nvidia.golden: each case survived the diff tests as a mutant).  Expected values by hand:

- a = [grad, sgd], b = [grad, extra, sgd]: b's launch 2 is a's launch 1, one place later -- a moved
  run of one launch, (1, 2, 2, 3), said as "1 launch, at +1 place in b" (a single moved launch
  went unreported, and the shift's sign was reversed);
- a range of 0x100 bytes at 0x1000 in a that lies at 0x2000 in b: 0x10ff is 0x20ff, 0x1100 (the
  first byte past it) has no counterpart.
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
