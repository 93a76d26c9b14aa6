"""The program residence (bobc.nvidia.residence): images whose launches read the program table
from a copy in video memory, checked by decoding them (the QMD layouts' field tables, the
pushbuffer decoder), by nvdisasm, and by running the stage in bobc's simulator."""
import struct

import numpy as np
import pytest

import synthetic_bob as bob
from bobc.certify.footprints import program_conflicts
from bobc.errors import BobcError
from bobc.nvidia import decode, pushbuffer
from bobc.nvidia.encode import encode_images
from bobc.nvidia.residence import STAGE_UNIT
from bobc.sim.qmd_reader import read_launch
from bobc.targets import SM86, SM90

TARGETS = [SM86, SM90]
HOME = 0x12_0000_0000             # video memory past Bob's arena, 256-aligned
HOME_BYTES = 1 << 20


@pytest.fixture(scope="module")
def plan():
    return bob.bob_whole_program_plan()


@pytest.fixture(scope="module", params=TARGETS, ids=lambda t: t.name)
def pair(request, plan):
    """(target, images without a residence, images with one)."""
    target = request.param
    conflicts = program_conflicts(plan, target)
    return (target, encode_images(plan, target, conflicts),
            encode_images(plan, target, conflicts, resident=(HOME, HOME_BYTES)))


def _launch(images, target, index):
    raw = images.qmd[index * target.qmd_record_bytes:(index + 1) * target.qmd_record_bytes]
    return read_launch(raw, target.compute_class, f"launch {index}")


def test_every_launch_reads_code_and_bank0_from_the_residence(plan, pair):
    target, table, resident = pair
    assert resident.program == table.program                     # the host's table is unchanged
    for index in range(len(plan.launches)):
        before, after = _launch(table, target, index), _launch(resident, target, index)
        moved = HOME - plan.program_base
        assert after.program_address == before.program_address + moved
        assert after.prefetch_address == before.prefetch_address + moved
        assert after.cb0_address == before.cb0_address + moved
        assert HOME <= after.cb0_address < HOME + len(resident.program)
        assert (after.grid, after.block, after.registers, after.dependents) == \
               (before.grid, before.block, before.registers, before.dependents)


def _segment_methods(images, index):
    submission = images.manifest["submissions"][index]
    segment = images.push[submission["push_offset"]:submission["push_offset"] + submission["push_length"]]
    return [(m.subchannel, m.name, m.data) for m in pushbuffer.decode(segment, {1: "compute"})]


def test_every_submission_stages_the_table_and_waits_before_its_own_sends(plan, pair):
    target, table, resident = pair
    stage = resident.manifest["residence"]["stage"]
    for index in range(len(plan.submissions)):
        methods = _segment_methods(resident, index)
        names = [name for _, name, _ in methods]
        first = names.index("SEND_PCAS_A")
        assert names[first:first + 4] == ["SEND_PCAS_A", "SEND_SIGNALING_PCAS2_B", "WAIT_FOR_IDLE",
                                          "INVALIDATE_SHADER_CACHES_NO_WFI"]
        assert methods[first][2] == stage["qmd_address"] >> 8
        # what follows is the submission's own segment, less its own constant-cache invalidate:
        # the stage's (which drops the constant cache too) stands for it
        own = _segment_methods(table, index)
        if not plan.submissions[index].counts:
            assert own[0] == (1, "INVALIDATE_SHADER_CACHES_NO_WFI", pushbuffer.INVALIDATE_CONSTANT)
            own = own[1:]
        assert methods[:first] + methods[first + 4:] == own


def test_the_stage_lies_after_the_segments_in_the_pushbuffer(plan, pair):
    target, table, resident = pair
    stage = resident.manifest["residence"]["stage"]
    segments_end = max(s["push_offset"] + s["push_length"] for s in resident.manifest["submissions"])
    assert segments_end <= stage["push_offset"] and stage["push_offset"] % 256 == 0
    assert len(resident.push) == stage["push_offset"] + stage["bytes"]
    offset = stage["qmd_address"] - plan.pushbuffer_base
    described = read_launch(resident.push[offset:offset + target.qmd_record_bytes], target.compute_class, "stage")
    assert described.program_address == stage["program_address"]
    bank = resident.push[described.cb0_address - plan.pushbuffer_base:][:target.parameter_block_bytes]
    source, destination, units = struct.unpack_from("<3Q", bank, target.parameter_base)
    assert (source, destination) == (plan.program_base, HOME)
    assert units * STAGE_UNIT == len(resident.program)
    assert described.grid[0] * described.block[0] >= units


@pytest.mark.parametrize("target", TARGETS, ids=lambda t: t.name)
def test_nvdisasm_decodes_every_stage_instruction(plan, target):
    images = encode_images(plan, target, program_conflicts(plan, target), resident=(HOME, HOME_BYTES))
    stage = images.manifest["residence"]["stage"]
    offset = stage["program_address"] - plan.pushbuffer_base
    code = images.push[offset:stage["push_offset"] + stage["bytes"]].rstrip(b"\0")
    code = code + bytes(-len(code) % 16)
    text = decode.disassemble(code, target.nvdisasm_arch)
    assert text is not None and "EXIT" in text and "STG.E.128" in text and "LDG.E.128" in text


@pytest.mark.parametrize("target", TARGETS, ids=lambda t: t.name)
def test_the_simulated_stage_copies_the_program_table_into_the_residence(plan, target):
    """bobc's SASS simulator runs the stage's QMD from the images: the residence ends holding
    the table, whatever it held before."""
    from bobc.sim.channel import Channel
    from bobc.sim.memory import Buffer, Memory, Resident

    images = encode_images(plan, target, program_conflicts(plan, target), resident=(HOME, HOME_BYTES))
    table = np.frombuffer(bytearray(images.program), dtype=np.uint8).copy()
    table[100:108] = np.frombuffer(b"hostword", dtype=np.uint8)     # a word the host wrote before the submission
    home = np.full(HOME_BYTES, 0xAB, dtype=np.uint8)
    push = np.frombuffer(bytearray(images.push), dtype=np.uint8).copy()
    buffers = [Buffer("program", plan.program_base, table), Buffer("pushbuffer", plan.pushbuffer_base, push),
               Buffer("residence", HOME, home)]
    channel = Channel(Memory(buffers, [Resident(b.name, b.address, b.data.size) for b in buffers]), contracts=None)
    channel.run_segment(images.push[:images.manifest["prologue"]["push_length"]], "prologue")
    stage = images.manifest["residence"]["stage"]
    channel.run_qmd(stage["qmd_address"], target.compute_class, "the stage")
    assert bytes(home[:table.size]) == bytes(table)
    assert not (home[table.size:] != 0xAB).any()


def test_a_residence_a_launch_writes_is_refused_naming_the_launch(plan):
    conflicts = program_conflicts(plan, SM86)
    index, footprint = next((i, f) for i, f in enumerate(conflicts.footprints) if f and f.writes)
    start = footprint.writes[0][0] // 256 * 256
    with pytest.raises(BobcError, match=rf"launch {index} \({plan.launches[index].identity}\) writes"):
        encode_images(plan, SM86, conflicts, resident=(start, HOME_BYTES))


def test_a_residence_no_footprint_shows_safe_is_refused(plan):
    with pytest.raises(BobcError, match="no known footprint"):
        encode_images(plan, SM86, None, resident=(HOME, HOME_BYTES))


@pytest.mark.parametrize("resident, message", [
    ((HOME + 16, HOME_BYTES), "not 256-byte aligned"),
    ((HOME, 4096), "cannot hold the"),
    ((bob.PROGRAM_BASE, HOME_BYTES), "overlaps the plan's program table"),
    (((1 << 40) - 4096, HOME_BYTES), "past 2\\^40"),
], ids=["misaligned", "too-small", "over-the-table", "past-2^40"])
def test_a_residence_that_cannot_serve_is_refused(plan, resident, message):
    with pytest.raises(BobcError, match=message):
        encode_images(plan, SM86, program_conflicts(plan, SM86), resident=resident)


def test_images_with_a_residence_are_deterministic(plan):
    conflicts = program_conflicts(plan, SM90)
    one = encode_images(plan, SM90, conflicts, resident=(HOME, HOME_BYTES))
    two = encode_images(plan, SM90, program_conflicts(plan, SM90), resident=(HOME, HOME_BYTES))
    assert (one.program, one.qmd, one.push, one.gpfifo) == (two.program, two.qmd, two.push, two.gpfifo)
    assert one.manifest == two.manifest


def test_bobc_dump_shows_the_stage(plan):
    """decode.lines (what `bobc dump` prints) decodes the stage from the pushbuffer's appendix:
    its grid, its three parameters and its code, nvdisasm's text beside each instruction."""
    images = encode_images(plan, SM90, program_conflicts(plan, SM90), resident=(HOME, HOME_BYTES))
    found = {line.key: line for line in decode.lines(images) if line.key.startswith("residence.")}
    assert found["residence.base"].value == HOME and found["residence.bytes"].value == HOME_BYTES
    assert found["residence.stage.qmd.GRID_WIDTH"].value == images.manifest["residence"]["stage"]["grid"][0]
    words = [found[f"residence.stage.bank0[{SM90.parameter_base + 8 * k:#x}]"].value for k in range(3)]
    assert words == [plan.program_base, HOME, len(images.program) // STAGE_UNIT]
    code = [line for key, line in found.items() if key.startswith("residence.stage.code[")]
    assert len(code) == 17 and "EXIT" in code[-2].note and "BRA" in code[-1].note
