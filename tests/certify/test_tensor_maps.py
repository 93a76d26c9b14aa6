"""Tensor maps declared in kernel contracts (`//@ tensormap W of P ...`), written by the encoder.

The plan is the hand-built Bob plan (tests/images/synthetic_bob.py) with copies of Bob's kernels
in tmp_path, one given a tensormap line (and the ULDC.64 that reads its word).  The oracle for a
map's bytes is the CUDA driver: a parameter set cuTensorMapEncodeTiled accepted in
tests/nvidia/data/tensor-maps-driver-580.json.gz, its address field replaced by the launch's
pointer; for maps built from the launch's words, bobc.nvidia.tensor_map.encode_tiled (held to that
capture by tests/nvidia/test_tensor_map.py) on a TiledTensor the test builds from the plan's own
numbers.
"""
from __future__ import annotations

import dataclasses
import gzip
import json
import shutil
import struct
from pathlib import Path

import pytest

import synthetic_bob as bob
from bobc import pipeline
from bobc.certify import findings
from bobc.certify.footprints import launch_footprints
from bobc.certify.kernels import ContractError, parse_contract
from bobc.errors import BobcError
from bobc.nvidia.encode import encode_images
from bobc.nvidia.tensor_map import TiledTensor, encode_tiled
from bobc.certify.pointers import check_pointers
from bobc.plan.host import Fill, Scalar
from bobc.plan.model import ParameterPatch
from bobc.targets import SM86, SM90

REPO = Path(__file__).resolve().parents[2]
SPECS = REPO / "specs/Realization/Nvidia/SM86"
DRIVER = REPO / "tests/nvidia/data/tensor-maps-driver-580.json.gz"
ADAMW = [i for i, launch in enumerate(bob.bob_whole_program_plan().launches) if launch.identity == "bob-adamw"]
GATHER = [i for i, launch in enumerate(bob.bob_whole_program_plan().launches) if launch.identity == "bob-row-gather"]
MAP_WORD = 9                     # adamw declares words 0..8
READ_MAP_WORD = "    ULDC.64 UR6, c[0x0][param+0x48]\n"
EXPRESSIONS = "binary32 dims (256, hi[7]/256) strides (1024) box (32, 8) swizzle 128b"


def kernels(tmp_path, line: str | None = None, kernel: str = "bob-adamw", read: str = READ_MAP_WORD) -> Path:
    """Bob's four kernels copied into tmp_path/kernels, `kernel` given `line` before its code and
    `read` as its first instruction after the memory descriptor's."""
    folder = tmp_path / "kernels"
    folder.mkdir(parents=True, exist_ok=True)
    for source in SPECS.glob("bob-*.sass"):
        shutil.copy(source, folder / source.name)
    if line is not None:
        path = folder / f"{kernel}.sass"
        text = path.read_text()
        marker = "    ULDC.64 UR4, c[0x0][memory_descriptor]\n"
        text = text.replace("\n.kernel ", f"\n{line}\n.kernel ", 1).replace(marker, marker + read, 1)
        path.write_text(text)
    return folder


def contracts(folder: Path) -> dict:
    return {path.stem: parse_contract(path, path.stem) for path in folder.glob("*.sass")}


def word(program: bytes, images, launch: int, argument: int) -> int:
    """Argument `argument` of launch `launch`'s parameter block in the program image."""
    at = images.manifest["launches"][launch]["parameter_offset"] + SM90.parameter_base + 8 * argument
    return struct.unpack_from("<Q", program, at)[0]


def map_at(images, address: int) -> bytes:
    offset = address - bob.PROGRAM_BASE
    return images.program[offset:offset + 128]


def driver_record():
    """A rank-2 binary32 map without L2 promotion the driver accepted."""
    records = json.loads(gzip.decompress(DRIVER.read_bytes()))["records"]
    for r in records:
        p = r["params"]
        if (r["rc"] == 0 and p["rank"] == 2 and p["data_type"] == "float32" and p["interleave"] == "none"
                and p["l2_promotion"] == "none" and p["oob_fill"] == "zero" and p["element_strides"] == [1, 1]
                and 4 + (p["dims"][0] - 1) * 4 + (p["dims"][1] - 1) * p["strides"][0] <= bob.TABLE):
            return r
    raise AssertionError("the capture has no such record")


# ---- the images

def test_the_map_is_the_drivers_and_its_word_holds_its_address(tmp_path):
    record = driver_record()
    p = record["params"]
    line = (f"//@ tensormap {MAP_WORD} of 1 binary32 dims ({p['dims'][0]}, {p['dims'][1]}) strides "
            f"({p['strides'][0]}) box ({p['box'][0]}, {p['box'][1]}) swizzle {p['swizzle']} G as tiles")
    folder = kernels(tmp_path, line)
    plan = bob.bob_plan()
    assert findings(plan, SM90, folders=[folder]) == []
    images = pipeline.encode(plan, SM90, [folder])          # the build's path: contracts from the search
    driver = bytearray(bytes.fromhex(record["bytes"]))
    driver[0:8] = struct.pack("<Q", bob.GRADIENTS)        # GLOBAL_ADDRESS (bits 63:0): the launch's word 1
    for launch in ADAMW:
        address = word(images.program, images, launch, MAP_WORD)
        assert address % 64 == 0 and address >= bob.PROGRAM_BASE
        assert map_at(images, address) == bytes(driver)
    assert len(images.manifest["tensor_maps"]) == 1        # ten launches, one map: one slot
    assert [u["launch"] for u in images.manifest["tensor_maps"][0]["users"]] == ADAMW
    assert len(images.program) == len(encode_images(plan.program, SM90).program) + 128


def test_a_map_built_from_the_launchs_words(tmp_path):
    folder = kernels(tmp_path, f"//@ tensormap {MAP_WORD} of 1 {EXPRESSIONS} G as tiles")
    plan = bob.bob_plan()
    images = encode_images(plan.program, SM90, contracts=contracts(folder))
    for launch in ADAMW:
        words = {p.word - bob.ARGUMENT0: p.value for p in plan.program.launches[launch].patches}
        elements = words[7] >> 32                          # docs/formats.md: the element count, word 7's high half
        expected = encode_tiled(TiledTensor("float32", words[1], (256, elements // 256), (1024,), (32, 8),
                                            swizzle="128b"))
        assert map_at(images, word(images.program, images, launch, MAP_WORD)) == expected


def test_distinct_maps_take_distinct_slots_and_an_inactive_map_is_a_zero_word(tmp_path):
    # the gather kernel's destination row moves per prompt: three maps; word 1 (the prompt byte's
    # address) has bit 4 set for prompt 1 only, so `unless lo[1]&4` leaves its map out
    line = "//@ tensormap 3 of 0 binary32 dims (256, 1) strides (1024) box (64, 1) swizzle none the row"
    folder = kernels(tmp_path, line, "bob-row-gather", "    ULDC.64 UR6, c[0x0][param+0x18]\n")
    plan = bob.bob_plan()
    images = encode_images(plan.program, SM90, contracts=contracts(folder))
    addresses = [word(images.program, images, launch, 3) for launch in GATHER]
    assert len(set(addresses)) == 3 and len(images.manifest["tensor_maps"]) == 3
    for index, (launch, address) in enumerate(zip(GATHER, addresses)):
        row = bob.LOGIT_ROWS + index * bob.ROW
        assert map_at(images, address) == encode_tiled(TiledTensor("float32", row, (256, 1), (1024,), (64, 1)))

    prompt_bytes = [bob.PROMPT_BYTES + index * 4 for index in range(3)]
    assert [bool(a & 4) for a in prompt_bytes] == [False, True, False]
    folder = kernels(tmp_path, line.replace("swizzle none", "swizzle none unless lo[1]&4"), "bob-row-gather",
                     "    ULDC.64 UR6, c[0x0][param+0x18]\n")
    images = encode_images(plan.program, SM90, contracts=contracts(folder))
    addresses = [word(images.program, images, launch, 3) for launch in GATHER]
    assert addresses[1] == 0 and addresses[0] != 0 and addresses[2] != 0
    assert len(images.manifest["tensor_maps"]) == 2


def test_plans_without_tensormap_lines_encode_as_before(tmp_path):
    plan = bob.bob_plan()
    for target in (SM86, SM90):
        before = encode_images(plan.program, target)
        after = encode_images(plan.program, target, contracts=contracts(kernels(tmp_path)))
        assert (after.program, after.qmd, after.push, after.gpfifo, after.manifest) == \
            (before.program, before.qmd, before.push, before.gpfifo, before.manifest)


def test_a_plan_written_for_sm86_gets_its_map_word_at_sm90s_parameter_base(tmp_path):
    # the plan's words start at 0x160 (word 44); on sm_90 they and the map's word start at 0x210
    folder = kernels(tmp_path, f"//@ tensormap {MAP_WORD} of 1 {EXPRESSIONS} G")
    plan = bob.bob_plan()
    images = encode_images(plan.program, SM90, contracts=contracts(folder))
    block = images.manifest["launches"][ADAMW[0]]["parameter_offset"]
    assert struct.unpack_from("<Q", images.program, block + 0x210 + 8)[0] == bob.GRADIENTS     # argument 1
    address = struct.unpack_from("<Q", images.program, block + 0x210 + 8 * MAP_WORD)[0]
    assert map_at(images, address)[:8] == struct.pack("<Q", bob.GRADIENTS)


# ---- refusals

def test_a_map_past_its_pointers_resident_is_a_finding_naming_both(tmp_path):
    line = f"//@ tensormap {MAP_WORD} of 1 binary32 dims (256, hi[7]/256+1) strides (1024) box (32, 8) " \
           "swizzle 128b G"
    faults = findings(bob.bob_plan(), SM90, folders=[kernels(tmp_path, line)])
    messages = [f.message for f in faults]
    assert len(faults) == len(ADAMW) and {f.kind for f in faults} == {"extent"}
    assert f"launch {ADAMW[0]} (bob-adamw) tensor map word {MAP_WORD} (of argument 1, G) reads 263,168 bytes" \
        in messages[0]
    assert "runs 1,024 bytes past gradients" in messages[0]


def test_a_plan_that_patches_the_map_word_is_refused(tmp_path):
    folder = kernels(tmp_path, f"//@ tensormap {MAP_WORD} of 1 {EXPRESSIONS} G")
    program = bob.bob_whole_program_plan()
    launches = list(program.launches)
    launch = launches[ADAMW[0]]
    launches[ADAMW[0]] = dataclasses.replace(
        launch, patches=launch.patches + (ParameterPatch(bob.ARGUMENT0 + MAP_WORD, 0x1234),))
    program = dataclasses.replace(program, launches=tuple(launches))
    with pytest.raises(BobcError, match=rf"launch {ADAMW[0]} \(bob-adamw\), kernel bob-adamw, tensor map word "
                                        rf"{MAP_WORD} .*the plan patches this word"):
        encode_images(program, SM90, contracts=contracts(folder))
    faults = findings(bob.bob_plan(program), SM90, folders=[folder])
    assert any(f"argument {MAP_WORD} (word {bob.ARGUMENT0 + MAP_WORD}): the plan patches it" in f.message
               for f in faults)


def test_a_map_the_driver_would_refuse_is_refused_with_its_reason(tmp_path):
    # (a stride the launch's words make: the line alone cannot decide it, so the encoder refuses it;
    # what the line decides is refused at its line and column, below)
    line = f"//@ tensormap {MAP_WORD} of 1 binary32 dims (256, 256) strides (1020) box (32, 8) swizzle 128b G"
    folder = kernels(tmp_path, line)
    with pytest.raises(BobcError, match=rf"tensor map word {MAP_WORD} .*tensor map stride of dimension 1 is 1020 "
                                        r"bytes; it must be a multiple of 16") as refused:
        encode_images(bob.bob_whole_program_plan(), SM90, contracts=contracts(folder))
    # the message names the line that declares the map (file:line), where the author corrects it
    number = (folder / "bob-adamw.sass").read_text().splitlines().index(line) + 1
    assert f"declared at {folder / 'bob-adamw.sass'}:{number})" in str(refused.value)


def test_a_target_without_the_tensor_memory_accelerator_is_refused(tmp_path):
    folder = kernels(tmp_path, f"//@ tensormap {MAP_WORD} of 1 {EXPRESSIONS} G")
    assert not SM86.tensor_maps and SM90.tensor_maps
    with pytest.raises(BobcError, match=rf"launch {ADAMW[0]} \(bob-adamw\), kernel bob-adamw, tensor map word "
                                        rf"{MAP_WORD} .*target sm_86 has no Tensor Memory Accelerator"):
        encode_images(bob.bob_whole_program_plan(), SM86, contracts=contracts(folder))
    faults = findings(bob.bob_plan(), SM86, folders=[folder])
    assert any("target sm_86 has no Tensor Memory Accelerator" in f.message for f in faults)


def test_code_that_never_reads_the_map_word_is_a_finding(tmp_path):
    folder = kernels(tmp_path, f"//@ tensormap {MAP_WORD} of 1 {EXPRESSIONS} G", read="")
    messages = [f.message for f in findings(bob.bob_plan(), SM90, folders=[folder])]
    assert f"kernel bob-adamw declares tensormap word {MAP_WORD} (tensor map of word 1: G) but its code never " \
           "reads it" in messages


def test_a_host_fill_of_a_word_the_map_is_built_from_is_a_finding(tmp_path):
    # the element count (word 7's high half) sizes the map; a host that rewrote it each step
    # would leave the map bobc wrote at build time describing another tensor
    folder = kernels(tmp_path, f"//@ tensormap {MAP_WORD} of 1 {EXPRESSIONS} G")
    fill = Fill(ADAMW[0], 7 * 8 + 4, 0, "word32", Scalar("constant", value=65536.0))
    host = type("Host", (), {"fills": (fill,)})()            # check_pointers reads only the fills
    faults = check_pointers(dataclasses.replace(bob.bob_plan(), host=host), contracts(folder))
    assert any(f"launch {ADAMW[0]} (bob-adamw): host fill 0 rewrites argument 7 each step" in f.message
               for f in faults)


@pytest.mark.parametrize("line, at, what", [
    ("//@ tensormap 9 of 1 float32 dims (4, 4) strides (16) box (4, 4) swizzle none G", "float32",
     "unknown tensor map element 'float32'"),
    ("//@ tensormap 9 of 1 binary32 dims (4, 4) strides (16, 32) box (4, 4) swizzle none G", "32)",
     "2 dims take 1 strides, not 2"),
    ("//@ tensormap 9 of 1 binary32 dims (4, lo[7] * 2) strides (16) box (4, 4) swizzle none G", "lo[7]",
     "dims item 'lo[7] * 2' is not an expression"),
    ("//@ tensormap 9 of 1 binary32 dims (4, 4) strides (16) box (4, 4) swizzle 16b G", "16b",
     "unknown swizzle '16b'"),
    ("//@ tensormap 9 to 1 binary32 dims (4, 4) strides (16) box (4, 4) swizzle none G", "to",
     "expected 'of P'"),
    ("//@ tensormap 9 of 1 binary32 dims (4, 4) strides (16) box (4, 4) swizzle none when hi[7] & 1 G", "when",
     "expected a condition 'when TERM&MASK'"),
    # the CUDA driver's cuTensorMapEncodeTiled rules the line alone decides (its documented
    # requirements; tests/nvidia/data's capture of what driver 580 refused): a box of 1 to 256
    # elements a dimension, rows a multiple of 16 bytes and no longer than the swizzle's span, at
    # most a block's shared memory (227 KiB on sm_90) in all
    ("//@ tensormap 9 of 1 binary32 dims (4, 4) strides (16) box (4, 300) swizzle none G", "300",
     "box item 300 is outside 1 to 256"),
    ("//@ tensormap 9 of 1 binary32 dims (4, 4) strides (16) box (0, 4) swizzle none G", "0, 4)",
     "box item 0 is outside 1 to 256"),
    ("//@ tensormap 9 of 1 binary32 dims (4, 4) strides (16) box (3, 4) swizzle none G", "3, 4)",
     "box item 3: a box row (3 binary32 elements) is 12 bytes, not a multiple of 16"),
    ("//@ tensormap 9 of 1 binary16 dims (4, 4) strides (16) box (32, 4) swizzle 32b G", "32, 4)",
     "box item 32: a box row (32 binary16 elements) is 64 bytes, longer than the 32-byte swizzle's span"),
    ("//@ tensormap 9 of 1 binary64 dims (4, 4, 4) strides (16, 32) box (32, 32, 32) swizzle none G", "32, 32, 32",
     "the box is 262144 bytes, more than the 232448 bytes of shared memory a block can have"),
])
def test_a_malformed_tensormap_line_is_refused_at_its_line_and_column(tmp_path, line, at, what):
    folder = kernels(tmp_path, line)
    number = (folder / "bob-adamw.sass").read_text().splitlines().index(line) + 1
    with pytest.raises(ContractError) as refused:
        parse_contract(folder / "bob-adamw.sass")
    column = line.index(at) + 1                  # 1-based, at the offending text
    assert str(refused.value).startswith(f"{folder / 'bob-adamw.sass'}:{number}:{column}: {what}")


def test_a_map_over_a_word_that_is_not_a_pointer_or_a_declared_word_is_refused(tmp_path):
    with pytest.raises(ContractError, match=r"tensor map word 9 covers word 4, which the contract declares it "
                                            r"scalar"):
        parse_contract(kernels(tmp_path, f"//@ tensormap 9 of 4 {EXPRESSIONS} G") / "bob-adamw.sass")
    with pytest.raises(ContractError, match=r"parameter word 8 is declared twice"):
        parse_contract(kernels(tmp_path, f"//@ tensormap 8 of 1 {EXPRESSIONS} G") / "bob-adamw.sass")


# ---- footprints

def test_the_maps_extent_counts_as_its_pointers_access(tmp_path):
    # a map over M (word 2, read-write over the whole table) adds nothing; one over a longer
    # view of G (word 1, read) makes the launch read past G
    line = f"//@ tensormap {MAP_WORD} of 2 binary32 dims (256, 256) strides (1024) box (32, 8) swizzle 128b M"
    plan = bob.bob_plan()
    before = launch_footprints(plan, contracts(kernels(tmp_path / "a")))
    after = launch_footprints(plan, contracts(kernels(tmp_path / "b", line)))
    assert before == after                                  # word 2 is read-write over the same table already
    line = f"//@ tensormap {MAP_WORD} of 1 binary32 dims (256, 512) strides (1024) box (32, 8) swizzle 128b G2"
    after = launch_footprints(plan, contracts(kernels(tmp_path / "c", line)))
    launch = ADAMW[0]
    assert before[launch].reads[-1][1] == bob.GRADIENTS + bob.TABLE
    assert after[launch].reads[-1][1] == bob.GRADIENTS + 4 + 255 * 4 + 511 * 1024
    assert after[launch].writes == before[launch].writes
