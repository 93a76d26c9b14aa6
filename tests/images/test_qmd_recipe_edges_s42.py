"""Edges of one grid's QMD (bobc.nvidia.encode: qmd_registers, grid_qmd's program prefetch) that
session 42's mutation testing (notes/s42/probe-mutants7.md) found no test held: every shipped
image has register counts already a multiple of 8, code far below the prefetch field's reach and
its program below 2^40.  Expected values by hand from the rules stated here:

- registers are allocated per warp in units of 256 (cuda_occupancy.h's register allocation unit
  for compute capability 8.x and 9.x), 8 a thread, and a thread has at most 255
  (the Programming Guide's "Compute Capabilities" table);
- PROGRAM_PREFETCH_ADDR_LOWER/UPPER_SHIFTED hold the code's address >> 8 (bits 39:8, then 40 up)
  and PROGRAM_PREFETCH_SIZE the 256-byte lines from that line on: a 9-bit field (open-gpu-doc
  clc7c0qmd.h MW(1649:1641), clcbc0qmd.h MW(1401:1393)), so at most 0x1FF lines."""
from __future__ import annotations

import pytest

from bobc.errors import BobcError
from bobc.nvidia import qmd
from bobc.nvidia.encode import grid_qmd, qmd_registers
from bobc.targets import SM86, SM90

TARGETS = pytest.mark.parametrize("target", [SM86, SM90], ids=["sm_86", "sm_90"])


@TARGETS
def test_registers_are_counted_in_eights_up_to_255(target):
    assert [qmd_registers(n, target) for n in (1, 8, 9, 30, 248, 249, 255)] == [8, 8, 16, 32, 248, 255, 255]
    for bad in (0, 256):
        with pytest.raises(BobcError, match="allows 1..255"):
            qmd_registers(bad, target)


def fields(target, program, code_size):
    raw = grid_qmd(target, "launch 0 (t)", (1, 1, 1), (32, 1, 1), 32, 0, program, code_size, 0x2000_0000,
                   barriers=1)
    return qmd.decode_dict(target.qmd_layout, raw)


@TARGETS
def test_the_prefetch_covers_the_lines_the_code_touches(target):
    # code at 0x...80 of 256 bytes lies in two 256-byte lines: 0x1000_0000 and 0x1000_0100
    got = fields(target, 0x1000_0080, 256)
    assert (got["PROGRAM_PREFETCH_ADDR_LOWER_SHIFTED"], got["PROGRAM_PREFETCH_SIZE"]) == (0x10_0000, 2)
    assert fields(target, 0x1000_0000, 256)["PROGRAM_PREFETCH_SIZE"] == 1


@TARGETS
def test_code_longer_than_the_field_reaches_is_prefetched_as_far_as_it_reaches(target):
    # 200,000 bytes are 782 lines; the 9-bit field says 511 (the rest is fetched as it runs)
    assert fields(target, 0x1000_0000, 200_000)["PROGRAM_PREFETCH_SIZE"] == 0x1FF


@TARGETS
def test_a_program_above_2_to_the_40_keeps_its_upper_address_bits(target):
    program = 0x1234_5678_0000      # bits 39:8 0x3456_7800, 40 up 0x12; bits 31:0 0x5678_0000, 32 up 0x1234
    got = fields(target, program, 128)
    assert (got["PROGRAM_PREFETCH_ADDR_LOWER_SHIFTED"], got["PROGRAM_PREFETCH_ADDR_UPPER_SHIFTED"]) == (0x3456_7800, 0x12)
    assert (got["PROGRAM_ADDRESS_LOWER"], got["PROGRAM_ADDRESS_UPPER"]) == (0x5678_0000, 0x1234)


@pytest.mark.parametrize("target, slots", [(SM86, 1), (SM90, 2)], ids=["sm_86", "sm_90"])
def test_a_qmd_names_no_more_dependents_than_its_pointers(target, slots):
    # V03_00 has one pointer, DEPENDENT_QMD0_POINTER (clc7c0qmd.h has no DEPENDENT_QMD1_POINTER);
    # V04_00 two, DEPENDENT_QMD0_POINTER and DEPENDENT_QMD1_POINTER (clcbc0qmd.h).  One more is
    # refused, never dropped: the launch it names would not run.
    pointers = tuple(0x3000_0000 + 0x100 * k for k in range(slots + 1))
    raw = grid_qmd(target, "launch 0 (t)", (1, 1, 1), (32, 1, 1), 32, 0, 0x1000_0000, 128, 0x2000_0000,
                   pointers[:slots], barriers=1)
    got = qmd.decode_dict(target.qmd_layout, raw)
    names = ["DEPENDENT_QMD0_POINTER", "DEPENDENT_QMD1_POINTER"][:slots]
    assert [got[n] for n in names] == [p >> 8 for p in pointers[:slots]]
    with pytest.raises(BobcError, match=f"{slots + 1} dependent QMDs; a QMD names at most {slots}"):
        grid_qmd(target, "launch 0 (t)", (1, 1, 1), (32, 1, 1), 32, 0, 0x1000_0000, 128, 0x2000_0000, pointers,
                 barriers=1)


@pytest.mark.parametrize("grid, block, what", [
    ((1, 0, 1), (32, 1, 1), r"grid \(1, 0, 1\) has an empty dimension"),
    ((1, 1, 1), (32, 1, 0), r"block \(32, 1, 0\) has an empty dimension"),
    ((1, 1, 1), (0, 1, 1), r"block \(0, 1, 1\) has an empty dimension"),
])
@TARGETS
def test_a_grid_or_block_of_no_threads_is_refused_by_name(target, grid, block, what):
    # a zero in GRID_* / CTA_RASTER_* or CTA_THREAD_DIMENSION* launches nothing: refused, never written
    with pytest.raises(BobcError, match=what):
        grid_qmd(target, "launch 0 (t)", grid, block, 32, 0, 0x1000_0000, 128, 0x2000_0000, barriers=1)


@pytest.mark.parametrize("dependents", [(), (0x3000_0000, 0x3000_0100)], ids=["none", "two"])
def test_only_a_qmd_of_one_dependent_arrives_at_a_latch(dependents):
    # encode.ProgrammaticLaunch: a parent lets its one dependent start early; with none there is
    # nothing to start, and a QMD naming two arrives at no latch (programmatic_latches)
    with pytest.raises(BobcError, match=f"only a QMD with one dependent starts it early \\({len(dependents)} here\\)"):
        grid_qmd(SM90, "launch 0 (t)", (1, 1, 1), (32, 1, 1), 32, 0, 0x1000_0000, 128, 0x2000_0000, dependents,
                 arrive_latch=5, barriers=1)
    one = qmd.decode_dict("V04_00", grid_qmd(SM90, "launch 0 (t)", (1, 1, 1), (32, 1, 1), 32, 0, 0x1000_0000, 128,
                                              0x2000_0000, dependents[:1] or (0x3000_0000,), arrive_latch=5,
                                              barriers=1))
    assert (one["ENABLE_PROGRAM_PRE_EXIT"], one["ARRIVE_AT_LATCH_VALID"], one["ARRIVE_AT_LATCH_ID"]) == (1, 1, 5)


def test_a_bank_zero_the_v04_qmd_cannot_address_is_refused():
    # V04_00 holds bank 0's address >> 6 (clcbc0qmd.h CONSTANT_BUFFER_ADDR_LOWER_SHIFTED6 /
    # UPPER_SHIFTED6): a block off a 64-byte boundary would be read from the boundary below it.
    # V03_00 holds the whole address (clc7c0qmd.h CONSTANT_BUFFER_ADDR_LOWER / UPPER).
    with pytest.raises(BobcError, match="parameter block 0x20000020 is not aligned for the QMD"):
        grid_qmd(SM90, "launch 0 (t)", (1, 1, 1), (32, 1, 1), 32, 0, 0x1000_0000, 128, 0x2000_0020, barriers=1)
    got = qmd.decode_dict("V04_00", grid_qmd(SM90, "launch 0 (t)", (1, 1, 1), (32, 1, 1), 32, 0, 0x1000_0000, 128,
                                              0x56_7800_0040, barriers=1))
    # 0x56_7800_0040 >> 6 = 0x5678 << 18 | 1 = 0x1_59E0_0001
    assert (got["CONSTANT_BUFFER_ADDR_LOWER_SHIFTED6(0)"], got["CONSTANT_BUFFER_ADDR_UPPER_SHIFTED6(0)"]) == \
        (0x59E0_0001, 1)
    sm86 = qmd.decode_dict("V03_00", grid_qmd(SM86, "launch 0 (t)", (1, 1, 1), (32, 1, 1), 32, 0, 0x1000_0000, 128,
                                               0x12_3456_7820, barriers=1))
    assert (sm86["CONSTANT_BUFFER_ADDR_LOWER(0)"], sm86["CONSTANT_BUFFER_ADDR_UPPER(0)"]) == (0x3456_7820, 0x12)


@pytest.mark.parametrize("layout", ["V03_00", "V04_00"])
def test_a_field_written_twice_holds_the_second_value_alone(layout):
    # grid_qmd writes the program prefetch twice for a QMD that prefetches its dependent's code,
    # and QMD_TYPE 2 then 3 for a cluster: a write replaces the field's bits (2 then 1 reads 1, not 3)
    # and leaves its neighbours' bits alone
    codec = qmd.QMD(layout)
    codec.set("PROGRAM_PREFETCH_SIZE", 0x1FF).set("PROGRAM_PREFETCH_ADDR_UPPER_SHIFTED", 0xFF)
    codec.set("PROGRAM_PREFETCH_SIZE", 2).set("PROGRAM_PREFETCH_SIZE", 1)
    assert (codec.get("PROGRAM_PREFETCH_SIZE"), codec.get("PROGRAM_PREFETCH_ADDR_UPPER_SHIFTED")) == (1, 0xFF)
    high, low = qmd.layout_named(layout).field("PROGRAM_PREFETCH_SIZE")
    assert int.from_bytes(codec.to_bytes(), "little") >> low & ((1 << (high - low + 1)) - 1) == 1


@pytest.mark.parametrize("layout, size", [("V03_00", 256), ("V04_00", 384)])
def test_a_qmd_read_from_a_longer_slot_is_its_layouts_bytes(layout, size):
    # the hardware reads the layout's bytes (V03_00 256, V04_00 384); what lies after them in a
    # table slot is no part of the QMD, and reading it back gives the QMD's bytes alone
    record = bytes(k % 251 for k in range(size)) + b"\xff" * 128
    assert qmd.QMD(layout, record).to_bytes() == record[:size]
    assert qmd.QMD(layout, record).to_bytes(record_bytes=size + 128) == record[:size] + bytes(128)
