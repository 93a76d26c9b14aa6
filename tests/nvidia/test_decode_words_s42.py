"""How `bobc dump` and `bobc diff` say a ring entry's PRIV bit, a method header's bit 12 and a
header's SEC_OP change (probe s42 mutants8, mutation testing of nvidia/decode.py: dropping PRIV
from describe_entry, reading bit 13 for bit 12, and printing SEC_OP as a number passed every
related test).

Expected values by hand from the bit layouts: clc56f.h's method header (SEC_OP 31:29 with
INC_METHOD 1 and NON_INC_METHOD 3, SUBCHANNEL 15:13, ADDRESS 11:0, bit 12 in no field) and
GP_ENTRY1 bit 8 (no field in clc56f.h; Kepler's cla06f.h NVA06F_GP_ENTRY1_PRIV)."""
from __future__ import annotations

import struct
from pathlib import Path

from bobc.nvidia.decode import describe_entry, header_change, push_lines, read_images

GOLDEN = Path(__file__).resolve().parents[1] / "golden" / "bob-sm_90"


def test_a_ring_entrys_priv_bit_is_said():
    plain = struct.pack("<II", 0x1000, 1 << 10)                 # GET 0x1000 >> 2, LENGTH 1
    priv = struct.pack("<II", 0x1000, 1 << 10 | 1 << 8)
    assert "priv 1" not in describe_entry(plain)
    assert describe_entry(priv).endswith(" priv 1")


def test_a_header_change_names_both_sec_ops():
    a = 1 << 29 | 2 << 16 | 0x0D0 >> 2                          # INC_METHOD, COUNT 2, method 0x0D0
    b = 3 << 29 | 2 << 16 | 0x0D0 >> 2                          # NON_INC_METHOD
    assert header_change(a, b) == (f"header {a:#010x} -> {b:#010x} "
                                   "(SEC_OP INC_METHOD -> NON_INC_METHOD)")


def test_a_header_with_bit_12_set_says_so():
    images = read_images(GOLDEN)
    first = push_lines(images)[0]
    at = int(first.where.rsplit("+", 1)[1].split(",")[0], 16)   # its header's offset in push.bin
    assert "bit 12" not in first.where
    push = bytearray(images.push)
    push[at + 1] |= 1 << 4                                      # bit 12 of the little-endian dword
    images.push = bytes(push)
    assert push_lines(images)[0].where.endswith(", header bit 12 set")
