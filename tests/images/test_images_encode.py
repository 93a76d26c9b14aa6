"""The whole-program encoder, checked by decoding what it wrote against the plan's own values."""
import dataclasses
import json
import struct

import pytest

import synthetic_bob as bob
from bobc.errors import BobcError
from bobc.nvidia import decode, gpfifo, pushbuffer, qmd
from bobc.nvidia.encode import encode_images, write_images
from bobc.targets import SM86, SM90

TARGETS = [SM86, SM90]

# Field names per layout, from the facts doc (not from the encoder's recipe).
NAMES = {
    "V03_00": dict(grid=("CTA_RASTER_WIDTH", "CTA_RASTER_HEIGHT", "CTA_RASTER_DEPTH"),
                   registers="REGISTER_COUNT_V", cb_lo="CONSTANT_BUFFER_ADDR_LOWER(0)",
                   cb_hi="CONSTANT_BUFFER_ADDR_UPPER(0)", cb_shift=0, major=3),
    "V04_00": dict(grid=("GRID_WIDTH", "GRID_HEIGHT", "GRID_DEPTH"),
                   registers="REGISTER_COUNT", cb_lo="CONSTANT_BUFFER_ADDR_LOWER_SHIFTED6(0)",
                   cb_hi="CONSTANT_BUFFER_ADDR_UPPER_SHIFTED6(0)", cb_shift=6, major=4),
}


@pytest.fixture(scope="module")
def plan():
    return bob.bob_whole_program_plan()


@pytest.fixture(scope="module", params=TARGETS, ids=lambda t: t.name)
def encoded(request, plan):
    return request.param, encode_images(plan, request.param)


def expected_places(plan):
    """Retained regions repacked in declared order at the plan's alignment (all four are used)."""
    places, at = [], 0
    for region in plan.regions:
        places.append(at)
        at = -(-(at + len(region.code)) // plan.region_alignment) * plan.region_alignment
    return places, at


def test_shape_of_bob(plan):
    assert len(plan.launches) == 27 and len(plan.submissions) == 33


def test_every_qmd_decodes_to_the_plan(plan, encoded):
    target, images = encoded
    names = NAMES[target.qmd_layout]
    places, extent = expected_places(plan)
    first_block = -(-extent // 256) * 256
    assert len(images.qmd) == 27 * target.qmd_record_bytes
    for i, launch in enumerate(plan.launches):
        raw = images.qmd[i * target.qmd_record_bytes:(i + 1) * target.qmd_record_bytes]
        f = qmd.decode_dict(target.qmd_layout, raw)
        region = plan.regions[launch.region]
        assert tuple(f[n] for n in names["grid"]) == launch.grid
        assert (f["CTA_THREAD_DIMENSION0"], f["CTA_THREAD_DIMENSION1"], f["CTA_THREAD_DIMENSION2"]) == launch.block
        assert f[names["registers"]] == -(-region.registers // 8) * 8
        program = f["PROGRAM_ADDRESS_LOWER"] | (f["PROGRAM_ADDRESS_UPPER"] << 32)
        assert program == bob.PROGRAM_BASE + places[launch.region]
        cb = (f[names["cb_lo"]] | (f[names["cb_hi"]] << 32)) << names["cb_shift"]
        assert cb == bob.PROGRAM_BASE + first_block + i * target.parameter_block_bytes
        assert f["CONSTANT_BUFFER_SIZE_SHIFTED4(0)"] << 4 == target.parameter_block_bytes
        assert f["CONSTANT_BUFFER_VALID(0)"] == 1
        assert f["QMD_MAJOR_VERSION"] == names["major"]
        assert f["SASS_VERSION"] == target.sm
        assert f["BARRIER_COUNT"] == 1
        assert raw[qmd.LAYOUTS[target.qmd_layout].size:] == bytes(len(raw) - qmd.LAYOUTS[target.qmd_layout].size)


def test_v04_carries_the_set_that_ran_on_the_h200(plan):
    images = encode_images(plan, SM90)
    f = qmd.decode_dict("V04_00", images.qmd[:512])
    for name, value in {"QMD_MAJOR_VERSION": 4, "QMD_MINOR_VERSION": 0, "QMD_TYPE": 2, "QMD_GROUP_ID": 0x3F,
                        "INVALIDATE_TEXTURE_HEADER_CACHE": 1, "INVALIDATE_TEXTURE_SAMPLER_CACHE": 1,
                        "INVALIDATE_TEXTURE_DATA_CACHE": 1, "INVALIDATE_SHADER_DATA_CACHE": 1,
                        "API_VISIBLE_CALL_LIMIT": 1, "SAMPLER_INDEX": 1, "CWD_MEMBAR_TYPE": 1,
                        "CONSTANT_BUFFER_INVALIDATE(0)": 0}.items():
        assert f[name] == value, name


def test_code_lies_at_the_placed_addresses(plan, encoded):
    target, images = encoded
    places, extent = expected_places(plan)
    for region, place in zip(plan.regions, places):
        assert images.program[place:place + len(region.code)] == region.code
    manifest_regions = {r["identity"]: r for r in images.manifest["regions"]}
    for region, place in zip(plan.regions, places):
        assert manifest_regions[region.identity]["address"] == bob.PROGRAM_BASE + place


def test_parameter_blocks_hold_patches_and_driver_words(plan, encoded):
    target, images = encoded
    places, extent = expected_places(plan)
    first_block = -(-extent // 256) * 256
    shift = target.parameter_base - 0x160
    for i, launch in enumerate(plan.launches):
        start = first_block + i * target.parameter_block_bytes
        block = images.program[start:start + target.parameter_block_bytes]
        assert struct.unpack_from("<6I", block, 0) == launch.block + launch.grid
        # the windows that ran on the H200 (runtime_c/tests/device-logs, run 3)
        assert struct.unpack_from("<3Q", block, 0x18) == (0xFE_0000_0000, 0xFF_0000_0000, 0xFFFDC0)
        expected = {p.word * 8 + shift: p.value for p in launch.patches}
        if target.name == "sm_90":
            # a launch without clusters is in clusters of one block (PTX's %is_explicit_cluster 0,
            # %cluster_nctaid 1, %nclusterid the grid, %cluster_nctarank 1), where ptxas reads them
            gx, gy, gz = launch.grid
            expected.update({0x140: 1 << 32, 0x148: 1 | 1 << 32, 0x158: gx << 32, 0x160: gy | gz << 32, 0x188: 1})
        for offset in range(0x30, len(block), 8):
            assert struct.unpack_from("<Q", block, offset)[0] == expected.get(offset, 0), (i, hex(offset))


def test_sm90_moves_the_first_argument_to_0x210(plan):
    images = encode_images(plan, SM90)
    words = dict(decode.parameter_words(images, 0))
    assert words[0x210] == bob.PARAMETERS and words.get(0x160) != bob.PARAMETERS


def test_sm86_sizes_are_the_plans(plan):
    images = encode_images(plan, SM86)
    assert len(images.program) == plan.program_bytes
    assert len(images.qmd) == plan.qmd_table_bytes


def test_pushbuffer_method_sequence(plan, encoded):
    target, images = encoded
    methods = pushbuffer.decode(images.push)
    names = [m.name for m in methods]
    prologue = ["SET_OBJECT", "SET_SHADER_SHARED_MEMORY_WINDOW_A", "SET_SHADER_SHARED_MEMORY_WINDOW_B",
                "SET_SHADER_LOCAL_MEMORY_WINDOW_A", "SET_SHADER_LOCAL_MEMORY_WINDOW_B",
                "SET_SHADER_LOCAL_MEMORY_A", "SET_SHADER_LOCAL_MEMORY_B",
                "SET_SHADER_LOCAL_MEMORY_NON_THROTTLED_A", "SET_SHADER_LOCAL_MEMORY_NON_THROTTLED_B",
                "SET_SHADER_LOCAL_MEMORY_NON_THROTTLED_C", "INVALIDATE_SHADER_CACHES_NO_WFI"]
    # each submission first drops the constant cache (the host rewrote parameter blocks; no QMD
    # invalidates its bank 0: the prefetch of it must survive)
    per_submission = ["INVALIDATE_SHADER_CACHES_NO_WFI", "SEND_PCAS_A", "SEND_SIGNALING_PCAS2_B", "SEM_ADDR_LO",
                      "SEM_ADDR_HI", "SEM_PAYLOAD_LO", "SEM_PAYLOAD_HI", "SEM_EXECUTE"]
    assert not any(submission.counts for submission in plan.submissions)
    assert names == prologue + per_submission * 33
    assert methods[0].data == target.compute_class and methods[0].subchannel == 1
    body = methods[len(prologue):]
    for s, submission in enumerate(plan.submissions):
        assert body[8 * s].data == pushbuffer.INVALIDATE_CONSTANT
        chunk = body[8 * s + 1:8 * s + 8]
        (launch,) = submission.launches
        assert chunk[0].data << 8 == bob.QMD_BASE + launch * target.qmd_record_bytes
        assert chunk[1].meaning == "INVALIDATE_COPY_SCHEDULE"
        semaphore = bob.SEMAPHORE_BASE + submission.semaphore_offset
        assert chunk[2].data | (chunk[3].data << 32) == semaphore
        assert (chunk[4].data, chunk[5].data) == (1, 0)
        assert chunk[6].meaning == "RELEASE|RELEASE_WFI|PAYLOAD_SIZE_64BIT|RELEASE_TIMESTAMP"


@pytest.mark.parametrize("target", TARGETS, ids=lambda t: t.name)
def test_consecutive_launches_of_a_submission_wait_for_idle_between_them(plan, target):
    """The engine would start a grid while the one before it still runs: a plan's launches in one
    submission that are not always sent together (2 and 3 are also sent alone) are ordered by a
    WAIT_FOR_IDLE between each two (none before the first, whose predecessor's semaphore release
    already waited, and none after the last, whose release waits)."""
    first = plan.submissions[0]
    together = dataclasses.replace(first, launches=(2, 3, 5))
    images = encode_images(dataclasses.replace(plan, submissions=(together,) + plan.submissions[1:]), target)
    methods = pushbuffer.decode(images.push)
    names = [m.name for m in methods]
    start = names.index("SEND_PCAS_A")
    assert names[start:start + 8] == ["SEND_PCAS_A", "SEND_SIGNALING_PCAS2_B", "WAIT_FOR_IDLE",
                                      "SEND_PCAS_A", "SEND_SIGNALING_PCAS2_B", "WAIT_FOR_IDLE",
                                      "SEND_PCAS_A", "SEND_SIGNALING_PCAS2_B"]
    assert names[start + 8] == "SEM_ADDR_LO"
    sent = [m.data << 8 for m in methods[start:start + 8] if m.name == "SEND_PCAS_A"]
    assert sent == [bob.QMD_BASE + k * target.qmd_record_bytes for k in (2, 3, 5)]
    # by hand: IMMD_DATA_METHOD (4) << 29 | data 0 << 16 | subchannel 1 << 13 | 0x0110 >> 2
    wait = methods[start + 2]
    assert int.from_bytes(images.push[wait.offset:wait.offset + 4], "little") == 0x80002044
    # the other submissions, one launch each, have none
    assert names.count("WAIT_FOR_IDLE") == 2


# DEPENDENT_QMD0 fields per layout, transcribed from open-gpu-doc clc7c0qmd.h / clcbc0qmd.h
# (read with the simulator's reader, not the encoder's codec): enable, action, prefetch, pointer.
DEPENDENT = {"V03_00": ("DEPENDENT_QMD0_ENABLE", "DEPENDENT_QMD0_ACTION", "DEPENDENT_QMD0_PREFETCH",
                        "DEPENDENT_QMD0_POINTER"),
             "V04_00": ("DEPENDENT_QMD_ENABLE(0)", "DEPENDENT_QMD_ACTION(0)", "DEPENDENT_QMD_PREFETCH(0)",
                        "DEPENDENT_QMD0_POINTER")}


def _successors(*sequences):
    """launch -> the one launch its QMD schedules, with no footprints (every launch conflicts)."""
    from bobc.nvidia.encode import plan_launch_order
    from bobc.plan.model import Submission
    submissions = tuple(Submission(f"s{i}", tuple(launches), 16 * i) for i, launches in enumerate(sequences))
    order = plan_launch_order(dataclasses.replace(bob.bob_whole_program_plan(), submissions=submissions), slots=2)
    assert all(len(after) == 1 for after in order.dependents.values())
    return {launch: after[0] for launch, after in order.dependents.items()}


def test_a_launch_names_its_successor_only_when_every_submission_agrees():
    assert _successors((2, 0, 5)) == {2: 0, 0: 5}
    assert _successors((2, 0, 5), (2, 0)) == {2: 0}             # 0 ends the second submission
    assert _successors((2, 0, 5), (0, 7)) == {2: 0}             # 0 is followed by 5 and by 7
    assert _successors((3, 3)) == {}                            # a launch repeated: never its own successor
    assert _successors((1, 2, 1, 2)) == {1: 2}                  # 2 ends the list, so 2 -> 1 would go on
    assert _successors((4,), (4,)) == {}


@pytest.mark.parametrize("target", TARGETS, ids=lambda t: t.name)
def test_launches_always_sent_together_are_chained_through_their_qmds(plan, target):
    """A submission whose launches no other submission sends: the first is sent, each QMD
    schedules the next when its grid ends, and no WAIT_FOR_IDLE is needed."""
    from bobc.sim import qmd_fields as independent
    together = dataclasses.replace(plan.submissions[0], launches=(2, 0, 5))
    images = encode_images(dataclasses.replace(plan, submissions=(together,), submission_count=1), target)
    methods = pushbuffer.decode(images.push)
    names = [m.name for m in methods]
    start = names.index("SEND_PCAS_A")
    assert names[start:] == ["SEND_PCAS_A", "SEND_SIGNALING_PCAS2_B", "SEM_ADDR_LO", "SEM_ADDR_HI",
                             "SEM_PAYLOAD_LO", "SEM_PAYLOAD_HI", "SEM_EXECUTE"]
    assert methods[start].data << 8 == bob.QMD_BASE + 2 * target.qmd_record_bytes
    enable, action, prefetch, pointer = DEPENDENT[target.qmd_layout]

    def record(k):
        return images.qmd[k * target.qmd_record_bytes:(k + 1) * target.qmd_record_bytes]
    for launch, successor in ((2, 0), (0, 5)):
        raw = record(launch)
        assert independent.read(raw, target.qmd_layout, enable) == 1
        assert independent.read(raw, target.qmd_layout, action) == 3        # QMD_INVALIDATE_COPY_SCHEDULE
        assert independent.read(raw, target.qmd_layout, prefetch) == 1
        assert independent.read(raw, target.qmd_layout, pointer) << 8 == \
            bob.QMD_BASE + successor * target.qmd_record_bytes
        assert images.manifest["launches"][launch]["schedules"] == [successor]
    for launch in range(len(plan.launches)):
        if launch not in (2, 0):
            assert independent.read(record(launch), target.qmd_layout, enable) == 0
            assert images.manifest["launches"][launch]["schedules"] == []
    shown = {line.key: line for line in decode.launch_lines(images)}
    assert shown["launch[2].schedules[0]"].value == f"launch 0 ({plan.launches[0].identity})"
    assert shown["launch[2].schedules[0]"].note == ""
    assert "launch[5].schedules[0]" not in shown


@pytest.mark.parametrize("target", TARGETS, ids=lambda t: t.name)
def test_a_chained_qmd_prefetches_its_successors_code_and_bank_on_sm90(plan, target):
    """On V04_00 a QMD that schedules a successor has the successor's code (PROGRAM_PREFETCH_TYPE
    PREFETCH_POST) and bank 0 (constant buffer 5, PREFETCH_POST) fetched when its grid ends, as
    a CUDA graph's node does; a QMD scheduling nothing prefetches its own code at launch.  sm_86
    (V03_00, unmeasured) keeps its own code's prefetch everywhere.  Read with bobc.sim's field
    reader, not the encoder's codec."""
    from bobc.sim import qmd_fields as independent
    together = dataclasses.replace(plan.submissions[0], launches=(2, 0, 5))
    images = encode_images(dataclasses.replace(plan, submissions=(together,), submission_count=1), target)
    places, extent = expected_places(plan)
    first_block = -(-extent // 256) * 256

    def read(launch, name):
        raw = images.qmd[launch * target.qmd_record_bytes:(launch + 1) * target.qmd_record_bytes]
        return independent.read(raw, target.qmd_layout, name)

    def code(launch):
        return bob.PROGRAM_BASE + places[plan.launches[launch].region], len(plan.regions[plan.launches[launch].region].code)

    for launch, successor in ((2, 0), (0, 5), (5, None)):
        fetched = successor if successor is not None and target.qmd_layout == "V04_00" else launch
        address, size = code(fetched)
        assert read(launch, "PROGRAM_PREFETCH_ADDR_LOWER_SHIFTED") | \
            (read(launch, "PROGRAM_PREFETCH_ADDR_UPPER_SHIFTED") << 32) == address >> 8
        assert read(launch, "PROGRAM_PREFETCH_SIZE") == -(-(address % 256 + size) // 256)
        assert read(launch, "PROGRAM_PREFETCH_TYPE") == (1 if fetched != launch else 0)
        if target.qmd_layout != "V04_00":
            assert read(launch, "CONSTANT_BUFFER_VALID(5)") == 0
            continue
        assert read(launch, "CONSTANT_BUFFER_VALID(5)") == (successor is not None)
        assert read(launch, "CONSTANT_BUFFER_PREFETCH(5)") == (2 if successor is not None else 0)
        if successor is not None:
            bank = (read(launch, "CONSTANT_BUFFER_ADDR_LOWER_SHIFTED6(5)")
                    | read(launch, "CONSTANT_BUFFER_ADDR_UPPER_SHIFTED6(5)") << 32) << 6
            assert bank == bob.PROGRAM_BASE + first_block + successor * target.parameter_block_bytes
            assert read(launch, "CONSTANT_BUFFER_SIZE_SHIFTED4(5)") << 4 == target.parameter_block_bytes


def test_method_headers_by_hand(plan):
    images = encode_images(plan, SM90)
    first = int.from_bytes(images.push[:4], "little")
    # SET_OBJECT: SEC_OP INC (1) << 29 | count 1 << 16 | subchannel 1 << 13 | method 0 >> 2
    assert first == 0x20012000
    # SEM_EXECUTE = RELEASE (1) | RELEASE_WFI (bit 20) | 64-bit (bit 24) | timestamp (bit 25)
    assert int.from_bytes(images.push[-4:], "little") == 0x03100001
    # the last segment's semaphore header: INC, count 5, subchannel 0, SEM_ADDR_LO 0x5c >> 2 = 0x17
    assert int.from_bytes(images.push[-24:-20], "little") == (1 << 29) | (5 << 16) | 0x17


def test_ring_entries_point_at_their_segments(plan, encoded):
    target, images = encoded
    entries = gpfifo.decode(images.gpfifo)
    assert len(entries) == plan.submission_count == 33
    segments = decode.push_segments(images)[1:]
    for entry, submission, (label, methods) in zip(entries, images.manifest["submissions"], segments):
        assert entry.address == bob.PUSHBUFFER_BASE + submission["push_offset"]
        assert entry.length * 4 == submission["push_length"]
        start = submission["push_offset"]
        segment = pushbuffer.decode(images.push[start:start + 4 * entry.length], {1: "compute"})
        assert [m.name for m in segment] == [m.name for m in methods]
        assert [m.name for m in segment[:2]] == ["INVALIDATE_SHADER_CACHES_NO_WFI", "SEND_PCAS_A"]
    # by hand: entry 0's dword1 = LENGTH (10 dwords: the invalidate, SEND_PCAS_A 2, its action 1, the
    # release 6) << 10 | address bits 39:32 (0x10 of 0x1020000000)
    raw = images.gpfifo[:8]
    assert int.from_bytes(raw[4:], "little") == (10 << 10) | 0x10
    prologue = images.manifest["prologue"]
    assert prologue["gpfifo_entry"][0] == bob.PUSHBUFFER_BASE & 0xFFFFFFFF
    assert (prologue["gpfifo_entry"][1] >> 10) * 4 == prologue["push_length"]


def test_manifest_lists_launches_and_submissions(plan, encoded):
    target, images = encoded
    m = images.manifest
    assert m["target"] == target.name
    assert m["bases"] == {"program": bob.PROGRAM_BASE, "qmd": bob.QMD_BASE, "pushbuffer": bob.PUSHBUFFER_BASE,
                          "semaphore": bob.SEMAPHORE_BASE}
    assert [s["ring_entry"] for s in m["submissions"]] == list(range(33))
    assert [s["launches"] for s in m["submissions"]][27:] == [[1], [2], [3], [4], [5], [6]]
    assert [(l["grid"], l["block"]) for l in m["launches"]] == [(list(x.grid), list(x.block)) for x in plan.launches]
    json.dumps(m)


def test_deterministic(plan, tmp_path):
    for target in TARGETS:
        a, b = encode_images(plan, target), encode_images(plan, target)
        write_images(a, tmp_path / "a")
        write_images(b, tmp_path / "b")
        for name in ("program.bin", "qmd.bin", "push.bin", "gpfifo.bin", "manifest.json"):
            assert (tmp_path / "a" / name).read_bytes() == (tmp_path / "b" / name).read_bytes()


def test_unused_region_is_pruned_and_the_rest_repacked(plan):
    extra = bob.Region("unused-kernel", bob.code(40), 16, 32, 0, 0)
    regions = (plan.regions[0], extra) + plan.regions[1:]
    # plan places with the unused region in second place
    places, at = [], 0
    for region in regions:
        places.append(at)
        at = -(-(at + len(region.code)) // 256) * 256
    regions = tuple(dataclasses.replace(r, place=p) for r, p in zip(regions, places))
    renumber = {0: 0, 1: 2, 2: 3, 3: 4}
    launches = tuple(dataclasses.replace(l, region=renumber[l.region],
                                         program_address=bob.PROGRAM_BASE + places[renumber[l.region]])
                     for l in plan.launches)
    pruned_plan = dataclasses.replace(plan, regions=regions, launches=launches,
                                      program_bytes=plan.program_bytes + 768)
    images = encode_images(pruned_plan, SM90)
    assert images.manifest["pruned_regions"] == ["unused-kernel"]
    original = encode_images(plan, SM90)
    # repacked: the same code at the same places as without the unused region
    assert [(r["identity"], r["address"]) for r in images.manifest["regions"]] == \
        [(r["identity"], r["address"]) for r in original.manifest["regions"]]
    assert [(r["identity"], r["plan_place"]) for r in images.manifest["regions"]][1] == ("bob-loss-gradient", places[2])
    assert images.program == original.program and images.qmd == original.qmd


def test_refuses_a_program_size_the_plan_did_not_compute(plan):
    wrong = dataclasses.replace(plan, program_bytes=plan.program_bytes + 512)
    with pytest.raises(BobcError, match=rf"{plan.program_bytes}.*{plan.program_bytes + 512}"):
        encode_images(wrong, SM86)
    encode_images(wrong, SM90)      # sm_90's blocks differ from the plan's: the size is recorded, not checked


def test_refuses_a_launch_whose_address_matches_no_region(plan):
    bad = dataclasses.replace(plan.launches[3], program_address=bob.PROGRAM_BASE + 0x10)
    wrong = dataclasses.replace(plan, launches=plan.launches[:3] + (bad,) + plan.launches[4:])
    with pytest.raises(BobcError, match=r"launch 3 \(bob-row-gather\).*0x1000000010 matches no region"):
        encode_images(wrong, SM90)


# launch 0 is sent by submission 0 alone: after it, a missing launch would be its dependent QMD
@pytest.mark.parametrize("index, launches", [(5, (27,)), (0, (0, 27))], ids=["alone", "after-a-launch-chaining-to-it"])
def test_refuses_a_submission_of_a_missing_launch(plan, index, launches):
    bad = dataclasses.replace(plan.submissions[index], launches=launches)
    wrong = dataclasses.replace(plan, submissions=plan.submissions[:index] + (bad,) + plan.submissions[index + 1:])
    with pytest.raises(BobcError, match=rf"submission {index} .*launch 27; the plan has 27 launches"):
        encode_images(wrong, SM86)


def test_refuses_a_patch_past_the_block(plan):
    launch = plan.launches[0]
    bad = dataclasses.replace(launch, patches=launch.patches + (bob.ParameterPatch(64, 1),))
    wrong = dataclasses.replace(plan, launches=(bad,) + plan.launches[1:])
    with pytest.raises(BobcError, match=r"launch 0 \(bob-loss-gradient\): parameter word 64"):
        encode_images(wrong, SM86)


def test_refuses_a_qmd_table_size_the_plan_did_not_compute(plan):
    wrong = dataclasses.replace(plan, qmd_table_bytes=26 * 256)
    with pytest.raises(BobcError, match=r"QMD table is 6912 bytes .* plan computed 6656"):
        encode_images(wrong, SM86)


def test_refuses_a_launch_naming_another_regions_address(plan):
    bad = dataclasses.replace(plan.launches[1], program_address=plan.launches[0].program_address)
    wrong = dataclasses.replace(plan, launches=plan.launches[:1] + (bad,) + plan.launches[2:])
    with pytest.raises(BobcError, match=r"launch 1 \(bob-row-gather\) names region 0 .* is region 1's "
                                        r"\(bob-loss-gradient\)"):
        encode_images(wrong, SM90)


def test_a_grid_the_qmd_cannot_hold_names_the_launch_and_field(plan):
    bad = dataclasses.replace(plan.launches[7], grid=(256, 1 << 16, 1))
    wrong = dataclasses.replace(plan, launches=plan.launches[:7] + (bad,) + plan.launches[8:])
    with pytest.raises(BobcError, match=r"launch 7 \(bob-adamw\): QMD field CTA_RASTER_HEIGHT is 16 bits wide"):
        encode_images(wrong, SM86)
    with pytest.raises(BobcError, match=r"launch 7 \(bob-adamw\): QMD field GRID_HEIGHT is 16 bits wide"):
        encode_images(wrong, SM90)
