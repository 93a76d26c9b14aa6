"""golden.compare names what changed by meaning; `bobc dump` shows every field, method, entry,
word and instruction as one self-describing line."""
import dataclasses
import re

import pytest

import synthetic_bob as bob
from bobc import nvtools
from bobc.cli import main
from bobc.nvidia.encode import encode_images, write_images
from bobc.nvidia.golden import compare
from bobc.targets import SM86, SM90


@pytest.fixture(scope="module")
def plan():
    return bob.bob_whole_program_plan()


def emit(plan, target, folder):
    return write_images(encode_images(plan, target), folder)


def test_identical_folders_compare_equal(plan, tmp_path):
    a, b = emit(plan, SM86, tmp_path / "a"), emit(plan, SM86, tmp_path / "b")
    assert compare(a, b) == []


def test_a_changed_grid_is_named_by_launch_and_field(plan, tmp_path):
    launches = list(plan.launches)
    launches[7] = dataclasses.replace(launches[7], grid=(128, 1, 1))
    changed = dataclasses.replace(plan, launches=tuple(launches))
    diff = compare(emit(plan, SM90, tmp_path / "a"), emit(changed, SM90, tmp_path / "b"))
    assert "launch[7].qmd.GRID_WIDTH (bob-adamw): 0x100 -> 0x80" in diff
    assert "launch[7].grid (bob-adamw): [0x100, 0x1, 0x1] -> [0x80, 0x1, 0x1]" in diff
    # bank 0 word 1 holds block z (1) in its low half and grid x in its high half
    assert ("launch[7].bank0[0x8] (bob-adamw): 0x10000000001 -> 0x8000000001  "
            "[block z (low u32), grid x (high u32)]") in diff
    # and the clusters along x (%nclusterid.x: a launch without clusters is in clusters of one block)
    assert ("launch[7].bank0[0x158] (bob-adamw): 0x10000000000 -> 0x8000000000  "
            "[clusters x (high u32)]") in diff
    assert len(diff) == 4


def test_a_changed_patch_is_named_by_parameter_word(plan, tmp_path):
    launches = list(plan.launches)
    patches = list(launches[2].patches)
    patches[1] = dataclasses.replace(patches[1], value=bob.LOGIT_ROWS + 8)
    launches[2] = dataclasses.replace(launches[2], patches=tuple(patches))
    changed = dataclasses.replace(plan, launches=tuple(launches))
    diff = compare(emit(plan, SM86, tmp_path / "a"), emit(changed, SM86, tmp_path / "b"))
    assert diff == [f"launch[2].bank0[0x168] (bob-greedy-argmax): {bob.LOGIT_ROWS:#x} -> {bob.LOGIT_ROWS + 8:#x}"
                    "  [argument 1: the logit row (pointer, read)]"]


def test_a_changed_semaphore_is_named_by_submission_and_method(plan, tmp_path):
    submissions = list(plan.submissions)
    submissions[30] = dataclasses.replace(submissions[30], semaphore_offset=0x400)
    changed = dataclasses.replace(plan, submissions=tuple(submissions))
    diff = compare(emit(plan, SM86, tmp_path / "a"), emit(changed, SM86, tmp_path / "b"))
    # push[3]: the submission's constant-cache invalidate, its send (two methods), then the release;
    # 0x500 bytes = the prologue's 16 words, 30 segments of 10, then 4 words into the 31st
    assert ("submission[30].push[3].SEM_ADDR_LO (bob-submission): 0x300001e0 -> 0x30000400  "
            "[method SEM_ADDR_LO (subch 0 INC_METHOD, header at push +0x500)]") in diff
    assert "submission[30].semaphore_offset (bob-submission): 0x1e0 -> 0x400" in diff


def test_changed_code_is_named_by_region_and_instruction(plan, tmp_path):
    regions = list(plan.regions)
    code = bytearray(regions[2].code)
    code[0x40] ^= 1
    regions[2] = dataclasses.replace(regions[2], code=bytes(code))
    changed = dataclasses.replace(plan, regions=tuple(regions))
    diff = compare(emit(plan, SM86, tmp_path / "a"), emit(changed, SM86, tmp_path / "b"))
    assert len(diff) == 1 and diff[0].startswith("region[2].code[0x0040] (bob-adamw): ")


def test_dump_names_every_part(plan, tmp_path, capsys):
    folder = emit(plan, SM90, tmp_path / "img")
    assert main(["dump", str(folder), "--no-code"]) == 0
    text = capsys.readouterr().out
    lines = text.splitlines()
    assert sum(1 for line in lines if ".qmd.REGISTER_COUNT = " in line) == 27
    assert "launch[5].qmd.CTA_THREAD_DIMENSION0 = 0x40" in lines
    assert sum(1 for line in lines if ".SEND_PCAS_A = " in line) == 33
    assert any(line.startswith("prologue.push[0].SET_OBJECT = 0xcbc0  # HOPPER_COMPUTE_A;") for line in lines)
    assert sum(1 for line in lines if line.startswith("gpfifo[")) == 33
    assert any(line.startswith("prologue.gpfifo_entry = ") for line in lines)
    assert any(line.startswith(f"launch[0].bank0[0x210] = {bob.PARAMETERS:#x}  # argument 0: ") for line in lines)
    # every line names its fact by a key, and no key repeats
    keys = [line.split(" = ", 1)[0] for line in lines]
    assert all(" " not in key for key in keys) and len(set(keys)) == len(keys)


def test_dump_of_a_missing_folder_is_a_usage_error(tmp_path, capsys):
    assert main(["dump", str(tmp_path / "nothing")]) == 2


@pytest.mark.oracle
@pytest.mark.skipif(nvtools.nvdisasm() is None, reason="nvdisasm not installed")
@pytest.mark.parametrize("target", [SM86, SM90], ids=lambda t: t.name)
def test_dump_disassembles_each_region(plan, tmp_path, capsys, target):
    folder = emit(plan, target, tmp_path / "img")
    assert main(["dump", str(folder)]) == 0
    text = capsys.readouterr().out
    code = [line for line in text.splitlines() if ".code[" in line]
    assert sum(1 for line in code if line.endswith(" EXIT")) == 4
    # each instruction line: two 64-bit words, then the control code and nvdisasm's text
    assert all(re.match(r"^region\[\d\]\.code\[0x[0-9a-f]{4}\] = 0x[0-9a-f]{16} 0x[0-9a-f]{16}  "
                        r"# \[B[0-5-]{6}:R[0-5-]:W[0-5-]:[Y-]:S\d\d\] [A-Z]", line) for line in code), code[:3]


def test_a_folder_whose_files_disagree_with_its_manifest_is_refused(plan, tmp_path):
    from bobc.errors import BobcError
    from bobc.nvidia.decode import read_images

    folder = emit(plan, SM86, tmp_path / "img")
    (folder / "qmd.bin").write_bytes((folder / "qmd.bin").read_bytes()[:-256])
    with pytest.raises(BobcError, match=r"qmd.bin is 6656 bytes; the manifest says 6912"):
        read_images(folder)
    (folder / "gpfifo.bin").unlink()
    assert main(["dump", str(folder)]) == 1  # a file refused: 1 for every subcommand but diff (probe s30 cli finding 7)


def test_a_manifest_without_the_image_fields_is_refused(plan, tmp_path):
    from bobc.errors import BobcError
    from bobc.nvidia.decode import read_images

    folder = emit(plan, SM86, tmp_path / "img")
    (folder / "manifest.json").write_text('{"target": "sm_86"}')
    with pytest.raises(BobcError, match=r"not a bobc image manifest: it lacks qmd_layout, "):
        read_images(folder)
    (folder / "manifest.json").write_text("[1]")
    with pytest.raises(BobcError, match="not a JSON object"):
        read_images(folder)
