"""bobc diff's section summary and the host-table reader count bytes as every other bobc message
does (certify/limits.shown_bytes: "1 byte", "4,096 bytes"), with the verb agreeing, not "byte(s)"
(probe s42 recordfmt2).  Expected texts are written out by hand."""
from __future__ import annotations

import pytest

from bobc.host import sections


def test_one_differing_byte_is_a_byte_that_differs():
    assert sections.section_change(".text", b"abcd", b"abXd").startswith("1 byte differs, the first at +0x2")


def test_many_differing_bytes_are_counted_with_separators():
    x, y = bytes(5000), bytes([1]) * 5000
    assert sections.section_change(".text", x, y).startswith("5,000 bytes differ, the first at +0x0")


@pytest.mark.parametrize("size, said", [(1, "1 byte at 0x50 lies outside"), (4096, "4,096 bytes at 0x50 lie outside")])
def test_a_read_outside_the_loaded_sections_counts_its_bytes(size, said):
    memory = sections._Memory(b"\0" * 16, [(0x10, 0x20, 0, ".rodata")])
    with pytest.raises(sections._Undecodable, match=said):
        memory.read(0x50, size)
