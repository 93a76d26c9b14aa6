"""What Data.Bytes's word helpers and participantGroupNext compute at their edges, as their
comments now say (probe s39 stdlib findings 2 and 4; struct is the oracle for the bytes)."""
from __future__ import annotations

import struct


def test_word_helpers_keep_low_bits_and_read_missing_bytes_as_zero(probe):
    program = probe("import Data.Bytes\n\n"
                    "def w32 : Bytes = (dataBytesWord32LE 0x1deadbeef)\n"
                    "def w64 : Bytes = (dataBytesWord64LE 0x10102030405060708)\n"
                    "def past : Nat = (dataBytesReadLE b\"\\x01\\x02\\x03\" 1 4)\n"
                    "def outside : Nat = (dataBytesReadLE b\"\\x01\\x02\\x03\" 9 8)\n"
                    "def inside : Nat = (dataBytesReadLE b\"\\x01\\x02\\x03\\x04\\x05\" 1 4)\n")
    assert program.value("w32").value == struct.pack("<I", 0xDEADBEEF)
    assert program.value("w64").value == struct.pack("<Q", 0x0102030405060708)
    # the bytes the input holds, then zeros: b"\x02\x03" + b"\x00\x00"
    assert program.value("past").value == struct.unpack("<I", b"\x02\x03\x00\x00")[0]
    assert program.value("outside").value == 0
    assert program.value("inside").value == struct.unpack("<I", b"\x02\x03\x04\x05")[0]


def test_next_worker_wraps_and_an_empty_group_admits_no_rank(probe):
    group = "(constructor ParticipantGroup ParticipantGroupValue b\"g\" {})"
    program = probe("import Representation.ParticipantGroup\n\n"
                    f"def wraps : Nat = (participantGroupNext {group.format(5)} 4)\n"
                    f"def inner : Nat = (participantGroupNext {group.format(5)} 2)\n"
                    f"def emptyNext : Nat = (participantGroupNext {group.format(0)} 3)\n"
                    f"def emptyAdmits : Nat = (participantGroupAdmits {group.format(0)} 0)\n")
    assert [program.value(n).value for n in ("wraps", "inner", "emptyNext", "emptyAdmits")] == [0, 3, 4, 0]


def test_a_linear_step_natural_is_an_immediate_converted_to_the_nearest_binary64(probe):
    """Platform.Linux.Nvidia.LinearStep's NvidiaLinearScalarNatural n (probe s39 stdlib finding 5):
    the host converts the immediate n (mod 2^64) to the nearest binary64 -- exact up to 2^53 only."""
    import struct

    from bobc.native.program import decode
    from bobc.reference.native_program import convert

    values = [2, 2 ** 53, 2 ** 53 + 1, 2 ** 64 - 1, 2 ** 64 + 3]
    text = "import Platform.Linux.Nvidia.LinearStep\nimport Runtime.NativePhysicalProgram\nimport Runtime.NativeFloatPlan\n\n"
    for i, v in enumerate(values):
        text += (f"def p{i} : Bytes = (nativePhysicalProgramBytes (constructor NativePhysicalProgram NativePhysicalProgramValue "
                 f"b\"n\" 8 512 (nlsPlace 256 0 (constructor NvidiaLinearScalarInput NvidiaLinearScalarNatural {v}) phEnd)))\n"
                 f"def exact{i} : Nat = (nativeFloatOfNatural {v % 2 ** 64})\n")
    program = probe(text)
    for i, v in enumerate(values):
        convert_command = decode(program.value(f"p{i}").value).commands[0]
        assert convert_command.v == [(0, v % 2 ** 64)]          # an immediate, modulo 2^64
        host = convert(0, convert_command.v[0][1])
        assert host == program.value(f"exact{i}").value        # the nearest binary64 (BinaryFloatModel)
        assert (struct.unpack("<d", struct.pack("<Q", host))[0] == v) == (v <= 2 ** 53)


def test_region_frame_place_takes_the_end_only(probe):
    """Compiler.Planning.RegionFrame's regionFramePlace is a function of `end` alone (its comment
    named a `bytes` argument it does not take; probe s39 stdlib finding 8)."""
    program = probe("import Compiler.Planning.RegionFrame\n\n"
                    "def place : Nat = (regionFramePlace 13)\n"
                    "def after : Nat = (regionFrameAfter 13 5)\n"
                    "def kind : Type 0 = (pi unrestricted end : Nat . Nat)\n"
                    "def typed : kind = regionFramePlace\n")
    program.check()
    assert program.value("place").value == 16            # 13 rounded up to a multiple of 8
    assert program.value("after").value == 24            # 16 + 5 = 21, rounded up
