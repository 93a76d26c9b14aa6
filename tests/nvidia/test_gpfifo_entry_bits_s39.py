"""GPFIFO entries (compiler/bobc/nvidia/gpfifo.py) against clc56f.h's NV_GP_ENTRY, worked by hand:
cases that session 39's mutation testing (notes/s39/probe-mutants.md) found no test held.

clc56f.h: NVC56F_GP_ENTRY0_GET 31:2, NVC56F_GP_ENTRY1_GET_HI 7:0, NVC56F_GP_ENTRY1_LEVEL 9:9,
NVC56F_GP_ENTRY1_LENGTH 30:10 (dwords, so 21 bits: at most 2^21 - 1), NVC56F_GP_ENTRY1_SYNC 31:31.
An entry of length 0 fetches nothing: bobc never writes one (gpfifo.Entry refuses it)."""
from __future__ import annotations

import pytest

from bobc.errors import BobcError
from bobc.nvidia import gpfifo


def test_the_top_length_bit_is_bit_30_of_dword1_and_reads_back():
    # length 2^20 + 1: LENGTH's top bit (dword1 bit 30) and its bottom bit (dword1 bit 10)
    entry = gpfifo.Entry(address=0x12_3456_7890, length=(1 << 20) | 1, sync=True)
    dword0, dword1 = 0x34567890, 0x12 | (1 << 10) | (1 << 30) | (1 << 31)
    assert entry.to_bytes() == dword0.to_bytes(4, "little") + dword1.to_bytes(4, "little")
    assert gpfifo.decode_entry(entry.to_bytes()) == entry


def test_the_longest_entry_is_2_to_the_21_minus_1_dwords():
    longest = gpfifo.Entry(address=0x1000, length=(1 << 21) - 1)
    assert longest.dwords()[1] == ((1 << 21) - 1) << 10 and not longest.dwords()[1] >> 31   # SYNC stays clear
    with pytest.raises(BobcError, match="length is 1..2"):
        gpfifo.Entry(address=0x1000, length=1 << 21).to_bytes()     # would set SYNC (bit 31)


def test_an_entry_of_no_dwords_is_refused():
    with pytest.raises(BobcError, match="length is 1..2"):
        gpfifo.Entry(address=0x1000, length=0).to_bytes()


def test_a_ring_image_of_part_of_an_entry_is_refused_as_such():
    with pytest.raises(BobcError, match="whole 8-byte entries; this one has 12 bytes"):
        gpfifo.decode(gpfifo.Entry(0x1000, 4).to_bytes() + bytes(4))
