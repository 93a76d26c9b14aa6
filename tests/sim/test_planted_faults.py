"""Faults planted in Bob's real images, each caught by the simulator with its place named.

The faults are written with bit positions stated here from NVIDIA's
documents (not from bobc.sim's or bobc.nvidia's tables):
- QMD V03_00 CONSTANT_BUFFER_ADDR_LOWER(0) = MW(1055:1024), V04_00
  CONSTANT_BUFFER_ADDR_LOWER_SHIFTED6(0) = MW(1567:1536) (open-gpu-doc clc7c0qmd.h, clcbc0qmd.h);
- control codes: stall 108:105, wait mask 121:116 of the 128-bit instruction
  (Mesa NAK encode_sm70.rs);
- GPFIFO LENGTH = entry dword 1 bits 30:10; method header SEC_OP 31:29,
  COUNT 28:16, SUBCHANNEL 15:13, ADDRESS 11:0 (clc56f.h), SEM_ADDR_LO = 0x5c.
"""
from __future__ import annotations

import dataclasses
import struct

import pytest

from bobc.sim import sass_frontend
from bobc.sim.channel import Channel
from bobc.sim.faults import Hazard, OutOfBounds, SemaphoreNotReleased, Unmodeled
from bobc.sim.host_adapter import host_plan
from bobc.sim.invocation import simulate
from bobc.sim.memory import Buffer, Memory

from .conftest import built_for

TARGETS = ["sm_86", "sm_90"]
CB0_LOWER_DWORD = {"sm_86": (1024 // 32, 0), "sm_90": (1536 // 32, 6)}    # (dword, address shift)
# NVIDIA's RAW latency for a coupled ALU result (LOP3) read by IMAD.WIDE's a/b operands
# (NAK sm80_instr_latencies.rs: CoupledAlu -> IMADWideReadAB = 5)
ALU_TO_WIDE_AB = 5


def run(target_name, images, operation="predict", record=None):
    built, target = built_for(target_name)
    return simulate(host_plan(built.plan, images, target, built.program.search_path), images, operation, record)


def with_bytes(images, attribute, offset, data):
    raw = bytearray(getattr(images, attribute))
    raw[offset:offset + len(data)] = data
    return dataclasses.replace(images, **{attribute: bytes(raw)})


def region(images, identity):
    r = next(r for r in images.manifest["regions"] if r["identity"] == identity)
    return r["place"], bytes(images.program[r["place"]:r["place"] + r["size"]])


def set_bits(word: int, high: int, low: int, value: int) -> int:
    mask = ((1 << (high - low + 1)) - 1) << low
    return (word & ~mask) | (value << low & mask)


def rewrite_instruction(images, place, pc, high, low, value):
    start = place + pc
    word = int.from_bytes(images.program[start:start + 16], "little")
    return with_bytes(images, "program", start, set_bits(word, high, low, value).to_bytes(16, "little"))


def row_gather(target_name):
    built, target = built_for(target_name)
    place, code = region(built.images, "bob-row-gather")
    return built.images, place, sass_frontend.decode(code, target.nvdisasm_arch)


@pytest.fixture(scope="module")
def record(case):
    return case[0]


@pytest.mark.parametrize("target_name", TARGETS)
def test_a_wrong_parameter_offset_in_one_qmd_is_caught(target_name, record):
    built, target = built_for(target_name)
    launch = built.images.manifest["launches"][1]          # the first row gather
    dword, shift = CB0_LOWER_DWORD[target_name]
    at = launch["qmd_offset"] + 4 * dword
    lower = struct.unpack_from("<I", built.images.qmd, at)[0]
    assert lower << shift & 0xFFFFFFFF == launch["parameter_address"] & 0xFFFFFFFF
    moved = lower + (64 >> shift)                          # the block 64 bytes off
    images = with_bytes(built.images, "qmd", at, struct.pack("<I", moved))
    with pytest.raises(OutOfBounds) as caught:
        run(target_name, images, record=record)
    assert "launch 1 (bob-row-gather)" in caught.value.message
    assert "outside every arena resident" in caught.value.message


@pytest.mark.parametrize("target_name", TARGETS)
def test_an_instruction_waiting_on_the_wrong_scoreboard_is_caught(target_name, record):
    images, place, code = row_gather(target_name)
    load = next(i for i in code if i.opcode == "LDG")      # LDG.E R4, [R2.64]: the prompt byte
    sb = load.control.write_scoreboard
    reader = next(i for i in code if i.pc > load.pc and any(o.kind == "reg" and o.index == load.operands[0].index
                                                              for o in i.operands[1:]))
    assert reader.control.wait_mask >> sb & 1, "the real image waits on the load's scoreboard"
    wrong = (reader.control.wait_mask & ~(1 << sb)) | (1 << (sb + 1) % 6)
    with pytest.raises(Hazard) as caught:
        run(target_name, rewrite_instruction(images, place, reader.pc, 121, 116, wrong), record=record)
    message = caught.value.message
    assert f"at {reader.pc:#06x}" in message and "launch 1 (bob-row-gather)" in message
    assert f"before waiting on scoreboard {sb}" in message


@pytest.mark.parametrize("target_name", TARGETS)
def test_a_stall_one_cycle_short_is_caught_and_the_exact_stall_is_not(target_name, record):
    images, place, code = row_gather(target_name)
    lop = next(i for i in code if i.opcode == "LOP3")                  # LOP3.LUT R4, R4, 0xff, ...
    wide = code[code.index(lop) + 1]                                   # IMAD.WIDE.U32 R8, R4, 0x400, R8
    assert wide.opcode == "IMAD" and wide.operands[1].index == lop.operands[0].index
    assert lop.control.stall >= ALU_TO_WIDE_AB
    exact = run(target_name, rewrite_instruction(images, place, lop.pc, 108, 105, ALU_TO_WIDE_AB), record=record)
    assert len(exact.channel.log.launches) == 7
    with pytest.raises(Hazard) as caught:
        run(target_name, rewrite_instruction(images, place, lop.pc, 108, 105, ALU_TO_WIDE_AB - 1), record=record)
    message = caught.value.message
    assert f"at {wide.pc:#06x}" in message
    assert (f"reads R{lop.operands[0].index} {ALU_TO_WIDE_AB - 1} cycles after its producer at {lop.pc:#06x} "
            f"issued; an ALU result needs {ALU_TO_WIDE_AB}") in message


@pytest.mark.parametrize("target_name", TARGETS)
def test_a_pointer_one_row_past_its_resident_is_caught(target_name, record):
    built, target = built_for(target_name)
    launch = built.images.manifest["launches"][0]          # the first loss-gradient launch
    at = launch["parameter_offset"] + target.parameter_base + 8      # argument 1: G
    gradients = struct.unpack_from("<Q", built.images.program, at)[0]
    resident = next(r for r in built.plan.arena.globals if r.name == "gradients")
    assert gradients == resident.address
    images = with_bytes(built.images, "program", at, struct.pack("<Q", gradients + 1024))
    with pytest.raises(OutOfBounds) as caught:
        run(target_name, images, record=record)
    message = caught.value.message
    assert "launch 0 (bob-loss-gradient)" in message and "STG" in message
    assert f"strays 0 bytes past the end of gradients [{resident.address:#x}" in message
    assert "into input-record" in message


@pytest.mark.parametrize("target_name", TARGETS)
def test_a_missing_semaphore_release_is_caught(target_name, record):
    built, _ = built_for(target_name)
    images = built.images
    dword0, dword1 = struct.unpack_from("<2I", images.gpfifo, 0)
    length = dword1 >> 10 & ((1 << 21) - 1)
    address = dword0 & 0xFFFFFFFC | (dword1 & 0xFF) << 32
    segment = address - images.manifest["bases"]["pushbuffer"]
    header = struct.unpack_from("<I", images.push, segment + 4 * (length - 6))[0]
    assert (header >> 29, header >> 16 & 0x1FFF, header & 0xFFF) == (1, 5, 0x5C >> 2), \
        "the segment ends with SEM_ADDR_LO..SEM_EXECUTE (INC_METHOD, 5 dwords)"
    shortened = set_bits(dword1, 30, 10, length - 6)
    images = with_bytes(images, "gpfifo", 4, struct.pack("<I", shortened))
    with pytest.raises(SemaphoreNotReleased) as caught:
        run(target_name, images, record=record)
    assert "GPFIFO entry 0 finished without releasing its semaphore" in caught.value.message


def test_a_method_the_simulator_does_not_model_is_refused_by_name():
    channel = Channel(Memory([Buffer("b", 0x1000, __import__("numpy").zeros(16, dtype="uint8"))], []), contracts=None)
    set_object = (1 << 29) | (1 << 16) | (1 << 13) | 0                  # INC, 1 dword, subchannel 1
    draw = (1 << 29) | (1 << 16) | (1 << 13) | (0x0380 >> 2)           # an unmodeled compute method
    segment = struct.pack("<4I", set_object, 0xC7C0, draw, 0)
    with pytest.raises(Unmodeled) as caught:
        channel.run_segment(segment, "test segment")
    assert "compute method 0x0380" in caught.value.message
