"""More host-step rules at their exact edges, on LinReg's schedule (probe s39 mutants3: each rule
below, its bound moved by one byte -- or an AssertWord's 4 bytes taken as none -- went through every
host-step test, tests/certify/test_host_step_edges_s39.py included).

The rules, from docs/host-steps.md: every byte a step touches lies in one buffer the plan maps, an
AssertWord's being the u32 at its `host` (4 bytes, "unless the u32 at `host` is `expected`"); every
BindInputIdentity, Read of the input (a repeat's at its last iteration) and ReadCyclic record it
visits lies inside the request layout's input record (LinReg's: 2,064 bytes); a RecordStat
stays inside the 4 KiB stat block; the reads of the input checkpoint cover its payload (LinReg's: 32
bytes), a one-byte hole included; a Submit issues at most up to the plan's submission count (one ring
entry each: LinReg's schedule submits up to 43, its last); no step writes a byte of a machine buffer
("program", "qmd", ...) or of a buffer lying inside one, a Commands step's mapped write lies in a
buffer the plan maps, and a buffer is inside one only when every
byte of it is -- spans are [start, end), so a write ending where a machine buffer begins writes none
of it."""
from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from bobc import pipeline
from bobc.certify.host_steps import check_host_steps, check_host_writes
from bobc.plan.host import make_step
from bobc.targets import SM86

REPO = Path(__file__).resolve().parents[2]
LINREG = REPO / "examples/linear_regression/LinReg/Build/NativeHost.bob"
STAT_BLOCK = 4096          # docs/host-steps.md, RecordStat: "the stat block (4 KiB)"
RECORD = 2064              # LinReg's request layout: an input record of 2,064 bytes


@pytest.fixture(scope="module")
def plan():
    return pipeline.extract(pipeline.load(LINREG, SM86), None)


def with_steps(plan, steps):
    return dataclasses.replace(plan, host=dataclasses.replace(plan.host, steps=tuple(steps)))


def with_step(plan, step, index=6):
    """`step` placed before LinReg's Operation (step 6), the rest as they are."""
    steps = list(plan.host.steps)
    return with_steps(plan, steps[:index] + [step] + steps[index:])


def messages(plan):
    return [f.message for f in check_host_steps(plan)]


def arena_end(plan):
    (arena,) = [b for b in plan.host.buffers if b.name == "arena"]
    return arena.gpu + arena.extent


def test_linregs_schedule_is_as_these_tests_take_it(plan):
    steps = plan.host.steps
    assert plan.host.request.input_record_bytes == RECORD
    assert [(s.kind.name, s.gp_put) for s in steps if s.kind.name == "submit"] == [("submit", 2), ("submit", 43)]
    assert len(plan.program.submissions) == 43
    assert (steps[1].kind.name, steps[1].file, steps[1].extent) == ("read", "checkpoint-in", 32)
    assert messages(plan) == []


def test_an_assert_words_four_bytes_lie_in_a_buffer(plan):
    end = arena_end(plan)
    inside = messages(with_step(plan, make_step("assert_word", identity=b"w", host=end - 4, expected=0)))
    assert not [m for m in inside if "lies in no buffer" in m], inside
    # the u32 at end - 2: two of its bytes are past the arena's end
    past = messages(with_step(plan, make_step("assert_word", identity=b"w", host=end - 2, expected=0)))
    assert any(m.startswith("the host's step 6 (assert_word) touches") and "(4 bytes), which lies in no buffer" in m
               for m in past), past


def test_a_bound_identity_one_byte_past_the_record_is_refused(plan):
    last = messages(with_step(plan, make_step("bind_input_identity", offset=RECORD - 4, extent=4)))
    assert not [m for m in last if "input record" in m], last
    past = messages(with_step(plan, make_step("bind_input_identity", offset=RECORD - 4, extent=5)))
    assert any("step 6 (bind_input_identity) reads (as its identity) bytes [2,060, 2,065) of its input" in m
               and "input record is 2,064 bytes" in m for m in past), past


def test_a_stat_one_byte_past_the_stat_block_is_refused(plan):
    host = plan.host.steps[4].host            # the result word the schedule writes: a mapped arena word
    last = messages(with_step(plan, make_step("record_stat", host=host, stat_offset=STAT_BLOCK - 4, extent=4)))
    assert not [m for m in last if "stat block" in m], last
    past = messages(with_step(plan, make_step("record_stat", host=host, stat_offset=STAT_BLOCK - 4, extent=5)))
    assert any("step 6 (record_stat) places bytes [4,092, 4,097) of the stat block, which holds 4,096" in m
               for m in past), past


def test_a_one_byte_hole_in_the_input_checkpoint_reads_is_refused(plan):
    steps = list(plan.host.steps)
    read = steps[1]
    halves = [dataclasses.replace(read, extent=16), dataclasses.replace(read, host=read.host + 17, offset=17, extent=15)]
    found = messages(with_steps(plan, steps[:1] + halves + steps[2:]))
    assert any("leave bytes [16, 17) of its 32-byte payload unread" in m for m in found), found
    whole = [dataclasses.replace(read, extent=16), dataclasses.replace(read, host=read.host + 16, offset=16, extent=16)]
    assert not [m for m in messages(with_steps(plan, steps[:1] + whole + steps[2:])) if "checkpoint" in m]


def test_a_submit_one_entry_past_the_ring_is_refused(plan):
    steps = list(plan.host.steps)
    steps[7] = dataclasses.replace(steps[7], gp_put=44)
    found = messages(with_steps(plan, steps))
    assert any("step 7 (submit) submits the ring up to entry 44, but the plan has 43 submissions" in m
               for m in found), found


def machine_edges(plan):
    (program,) = [b for b in plan.host.buffers if b.name == "program"]
    return program.gpu, program.gpu + program.extent


def with_buffer(plan, name, low, high, step):
    (arena,) = [b for b in plan.host.buffers if b.name == "arena"]
    buffers = plan.host.buffers + (dataclasses.replace(arena, name=name, gpu=low, host=low, extent=high - low),)
    host = dataclasses.replace(plan.host, buffers=buffers, steps=tuple(plan.host.steps[:6]) + (step,)
                               + tuple(plan.host.steps[6:]))
    return dataclasses.replace(plan, host=host)


def test_a_write_ending_where_a_machine_buffer_begins_writes_none_of_it(plan):
    low, _ = machine_edges(plan)
    # a staging buffer of 4 KiB just below the program table; a Fill of its last 4 bytes
    fill = make_step("fill", host=low - 4, payload=b"\x01\x02\x03\x04")
    found = [f.message for f in check_host_writes(with_buffer(plan, "staging", low - 4096, low, fill))]
    assert found == [], found
    over = make_step("fill", host=low - 3, payload=b"\x01\x02\x03\x04")
    found = [f.message for f in check_host_writes(with_buffer(plan, "staging", low - 4096, low + 1, over))]
    assert any("into host buffer program" in m for m in found), found


def test_a_buffer_one_byte_longer_than_a_machine_buffer_is_not_its_alias(plan):
    _, high = machine_edges(plan)
    # a buffer from the program table's last 4 KiB to one byte past its end: not inside it, so its
    # byte past the program table is the plan's data, and a Fill of that byte writes no machine buffer
    fill = make_step("fill", host=high, payload=b"\x01")
    found = [f.message for f in check_host_writes(with_buffer(plan, "straddle", high - 4096, high + 1, fill))]
    assert found == [], found
    # a buffer inside the program table is its alias: a Fill of its last byte is refused
    inner = make_step("fill", host=high - 1, payload=b"\x01")
    found = [f.message for f in check_host_writes(with_buffer(plan, "inner", high - 4096, high, inner))]
    assert any("into host buffer" in m and "program" in m for m in found), found


def test_an_input_read_to_the_records_last_byte_fits_and_one_more_does_not(plan):
    read = plan.host.steps[0]
    assert (read.kind.name, read.file, read.offset, read.extent) == ("read", "input", 0, RECORD)
    past = messages(with_steps(plan, [dataclasses.replace(read, extent=RECORD + 1), *plan.host.steps[1:]]))
    assert any("step 0 (read) reads bytes [0, 2,065) of its input" in m for m in past), past


def repeated_read(plan, count):
    # 16 bytes of the input at offset 0, 16, 32, ...: iteration i reads [16 i, 16 i + 16)
    read = make_step("read", file="input", host=plan.host.steps[0].host, extent=16, offset=0, stride=16,
                     tolerate_empty=0)
    return with_step(plan, make_step("repeat", count=count, body=(read,)))


def test_a_repeated_reads_last_iteration_is_held_to_the_record(plan):
    # 129 iterations: the last reads [2,048, 2,064), the record's last 16 bytes
    assert not [m for m in messages(repeated_read(plan, 129)) if "input record" in m]
    # 130: the last reads [2,064, 2,080), past the record
    past = messages(repeated_read(plan, 130))
    assert any("reads (at its last iteration) bytes [2,064, 2,080) of its input" in m for m in past), past


def cyclic_read(plan, offset):
    # record 127 of 128 16-byte records from `offset`: bytes [offset + 2,032, offset + 2,048)
    return with_step(plan, make_step("read_cyclic", host=plan.host.steps[0].host, extent=16, offset=offset,
                                     record_bytes=16, count=128, index=127, index_stride=0))


def test_a_cyclic_reads_last_record_is_held_to_the_record(plan):
    assert not [m for m in messages(cyclic_read(plan, 16)) if "input record" in m]      # [2,048, 2,064)
    past = messages(cyclic_read(plan, 17))
    assert any("reads (record 127 of 128) bytes [2,049, 2,065) of its input" in m for m in past), past


def write_mapped(address: int) -> bytes:
    """A native program (docs/native-host.md: b"NPHY", version 1, slots, state bytes, identity length;
    then the commands) of one WriteMapped (code 10: address, width 4, an immediate operand) and End."""
    return (b"NPHY" + (1).to_bytes(4, "little") + (0).to_bytes(8, "little") + (64).to_bytes(8, "little")
            + (0).to_bytes(8, "little") + bytes([10]) + address.to_bytes(8, "little") + (4).to_bytes(8, "little")
            + bytes([0]) + (7).to_bytes(8, "little") + bytes([0]))


def test_a_mapped_write_to_a_buffers_last_byte_fits_and_one_more_does_not(plan):
    end = arena_end(plan)
    inside = check_host_writes(with_step(plan, make_step("commands", commands=write_mapped(end - 4))))
    assert [f.message for f in inside] == []
    past = [f.message for f in check_host_writes(with_step(plan, make_step("commands", commands=write_mapped(end - 3))))]
    assert any("step 6 (commands) command 0 (WriteMapped) writes" in m and "(4 bytes), which lies in no buffer the "
               "plan maps" in m for m in past), past
