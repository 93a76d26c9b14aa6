"""Edges of `bobc diff` across targets, sm_86 against sm_90 (session 44 mutants10 of
bobc.nvidia.golden: each case below survived the cross-target diff tests as a mutant).

1. A launch argument whose bank 0 word holds the same value on both targets is no difference,
   though the word lies at another offset (README's `bobc diff` row: "across targets ... bank 0
   arguments matched by their place among the parameters"; README's targets paragraph: parameter
   base 0x160 on sm_86, 0x210 on sm_90).  A mutant that reported every such word as a change
   (`0x1100000000 -> 0x1100000000`) added 540 lines to the goldens' diff; none may show one value,
   and no argument (the first included) may be on one side only.
2. Two QMD layouts' qmd.bin files are never compared byte by byte, even when they are the same
   length (the goldens' lengths differ, so a mutant comparing them survived).  Independent reason:
   sm_86's V03_00 QMD (open-gpu-doc clc7c0qmd.h, 256-byte slots here) and sm_90's V04_00
   (clcbc0qmd.h, 512-byte slots) put their fields at other bits, so a byte at one offset of the two
   files belongs to different fields, or to different launches; README's `bobc diff` row says the
   fields both layouts have are compared by name and the others named once (`qmd_layout.fields`).
   An sm_86 image set of 2N launches and an sm_90 one of N have qmd.bin files of one length (2N x
   256 = N x 512 bytes): built here from the goldens, sm_86's QMD table written twice."""
from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from bobc.nvidia import decode, golden

GOLDEN = Path(__file__).resolve().parents[1] / "golden"


@pytest.fixture(scope="module")
def goldens():
    return decode.read_images(GOLDEN / "bob-sm_86"), decode.read_images(GOLDEN / "bob-sm_90")


def test_an_argument_of_one_value_at_each_targets_offset_is_no_difference(goldens):
    a, b = goldens
    assert (a.manifest["parameter_base"], b.manifest["parameter_base"]) == (0x160, 0x210)
    found = golden.differences(a, b)
    assert any(d.kind == "bank0" for d in found)         # the driver words below the parameters differ
    same = [d.text() for d in found if d.kind == "bank0" and d.a == d.b]
    assert not same, same[:3]
    # each argument is on both sides (the same kernels): none is "only in" one, the first too
    one_sided = [d.text() for d in found if d.kind == "bank0" and None in (d.a, d.b) and "argument " in d.meaning]
    assert not one_sided, one_sided[:3]


def test_qmd_files_of_two_layouts_and_one_length_give_no_raw_lines(goldens):
    a, b = goldens
    assert (a.manifest["qmd_layout"], a.manifest["sizes"]["qmd_record"]) == ("V03_00", 256)
    assert (b.manifest["qmd_layout"], b.manifest["sizes"]["qmd_record"]) == ("V04_00", 512)
    doubled = dataclasses.replace(a, qmd=a.qmd + a.qmd)
    assert len(doubled.qmd) == len(b.qmd) and doubled.qmd != b.qmd
    raw = golden.raw_differences(doubled, b, [])
    assert not [d.key for d in raw if d.key.startswith("qmd.bin")], [d.text() for d in raw][:5]
    # the same two files under one layout are compared byte by byte (the check is not simply off)
    same_layout = dataclasses.replace(b, qmd=doubled.qmd)
    assert any(d.key.startswith("qmd.bin") for d in golden.raw_differences(same_layout, b, []))
