"""golden.raw_differences' edges (session 43 mutants9): each case survived the fast raw-byte tests
as a mutant of bobc.nvidia.golden.

golden's docstring: "every differing bit that no reported line shows ... is reported as a `raw`
difference naming the image, the offset, the enclosing record and the old and new bytes ... So an
empty list means the two hold the same bytes".  The cases, on the sm_90 golden (hand arithmetic
from its manifest: a QMD slot is 512 bytes, the V04_00 QMD 384 of them, so slot k's padding is
[512k + 0x180, 512k + 0x200); region 1 is [0x100, 0x9e70) and region 2 starts at 0x9f00):
- qmd.bin byte 0xfff, the last byte of a 4,096-byte comparison chunk (launch 7's slot padding):
  a chunk compared one byte short missed it -- two images that differ compared equal;
- a QMD padding flip beside a program.bin flip at the same offset: a code line's program span
  hid the QMD byte (spans of another image counted);
- two padding bytes with an unchanged one between: two lines, not one range over the unchanged;
- a padding byte's offset is in its slot (+0x1a0 in launch 1's slot at 0x3a0);
- program.bin 0x9e70, the first byte after region 1, is padding after region 1, not region 0;
- sixteen QMD bits in no field (bytes 16 and 17 of the V04_00 QMD: bits 128..143) list eight
  and "8 more".
"""
from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from bobc.nvidia import decode, golden

GOLDEN = Path(__file__).resolve().parents[1] / "golden" / "bob-sm_90"


@pytest.fixture(scope="module")
def base():
    images = decode.read_images(GOLDEN)
    m = images.manifest
    assert (m["qmd_layout"], m["sizes"]["qmd_record"], decode.qmd.LAYOUTS["V04_00"].size) == ("V04_00", 512, 384)
    places = {r["index"]: (r["place"], r["place"] + r["size"]) for r in m["regions"]}
    assert places[1] == (0x100, 0x9e70) and places[2][0] == 0x9f00
    return images


def flipped(images, **changes):
    out = images
    for image, flips in changes.items():
        data = bytearray(getattr(out, image))
        for offset, mask in flips:
            data[offset] ^= mask
        out = dataclasses.replace(out, **{image: bytes(data)})
    return out


def raw(found):
    return [d for d in found if d.kind == "raw"]


def test_the_last_byte_of_a_comparison_chunk_is_compared(base):
    found = golden.differences(base, flipped(base, qmd=[(0xfff, 0x80)]))
    assert [d.key for d in raw(found)] == ["qmd.bin[0xfff]"], [d.text() for d in found]
    assert "launch[7]'s QMD slot padding" in raw(found)[0].meaning


def test_a_code_line_does_not_show_a_qmd_byte(base):
    found = golden.differences(base, flipped(base, qmd=[(0x1a0, 0x02)], program=[(0x1a0, 0x01)]))
    assert "qmd.bin[0x1a0]" in [d.key for d in raw(found)], [d.text() for d in found]


def test_bytes_apart_are_lines_apart(base):
    found = golden.differences(base, flipped(base, qmd=[(0x1a0, 0x01), (0x1a2, 0x01)]))
    assert [(d.key, d.a, d.b) for d in raw(found)] == [("qmd.bin[0x1a0]", "00", "01"), ("qmd.bin[0x1a2]", "00", "01")]


def test_a_padding_byte_is_placed_in_its_slot(base):
    (d,) = raw(golden.differences(base, flipped(base, qmd=[(0x3a0, 0x01)])))
    assert d.key == "qmd.bin[0x3a0]" and "launch[1]'s QMD slot padding" in d.meaning
    assert "+0x1a0" in d.meaning and "+0x3a0" not in d.meaning, d.meaning


def test_the_byte_after_a_region_is_its_padding(base):
    (d,) = raw(golden.differences(base, flipped(base, program=[(0x9e70, 0x01)])))
    assert d.key == "program.bin[0x9e70]"
    assert "padding after region[1]" in d.meaning and "(which ends at 0x9e70)" in d.meaning, d.meaning


def test_more_than_eight_bits_are_counted(base):
    launch = base.manifest["launches"][3]["qmd_offset"]
    (d,) = raw(golden.differences(base, flipped(base, qmd=[(launch + 16, 0xff), (launch + 17, 0xff)])))
    assert "bit(s) 128, 129, 130, 131, 132, 133, 134, 135 and 8 more of the QMD" in d.meaning, d.meaning


def test_the_first_byte_past_the_qmd_is_padding(base):
    # the V04_00 QMD is bytes [0, 384) of its slot: byte 384 (0x180) is the slot's padding
    (d,) = raw(golden.differences(base, flipped(base, qmd=[(0x180, 0x01)])))
    assert d.key == "qmd.bin[0x180]" and "launch[0]'s QMD slot padding" in d.meaning, d.meaning
