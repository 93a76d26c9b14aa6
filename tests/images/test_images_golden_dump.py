"""golden.compare names what changed; `bobc dump` shows every field, method, entry and word."""
import dataclasses

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
    assert "launch 7 (bob-adamw) QMD GRID_WIDTH: 0x100 -> 0x80" in diff
    assert "launch 7 (bob-adamw) parameter word 1 (c[0x0][0x8]): 0x1 -> 0x100000001" not in diff
    assert any(line.startswith("launch 7 (bob-adamw) parameter word 1 (c[0x0][0x8])") for line in diff)
    assert not any(line.startswith("launch 6") for line in diff)


def test_a_changed_patch_is_named_by_parameter_word(plan, tmp_path):
    launches = list(plan.launches)
    patches = list(launches[2].patches)
    patches[1] = dataclasses.replace(patches[1], value=bob.LOGIT_ROWS + 8)
    launches[2] = dataclasses.replace(launches[2], patches=tuple(patches))
    changed = dataclasses.replace(plan, launches=tuple(launches))
    diff = compare(emit(plan, SM86, tmp_path / "a"), emit(changed, SM86, tmp_path / "b"))
    assert diff == [f"launch 2 (bob-greedy-argmax) parameter word 45 (c[0x0][0x168]): "
                    f"{bob.LOGIT_ROWS:#x} -> {bob.LOGIT_ROWS + 8:#x}"]


def test_a_changed_semaphore_is_named_by_submission_and_method(plan, tmp_path):
    submissions = list(plan.submissions)
    submissions[30] = dataclasses.replace(submissions[30], semaphore_offset=0x400)
    changed = dataclasses.replace(plan, submissions=tuple(submissions))
    diff = compare(emit(plan, SM86, tmp_path / "a"), emit(changed, SM86, tmp_path / "b"))
    assert any(line.startswith("submission 30 (bob-submission) method 2: subch 0 SEM_ADDR_LO = 0x300001e0 ->")
               for line in diff)
    assert "submission 30 (bob-submission) manifest semaphore_offset: 0x1e0 -> 0x400" in diff


def test_changed_code_is_named_by_region_and_instruction(plan, tmp_path):
    regions = list(plan.regions)
    code = bytearray(regions[2].code)
    code[0x40] ^= 1
    regions[2] = dataclasses.replace(regions[2], code=bytes(code))
    changed = dataclasses.replace(plan, regions=tuple(regions))
    diff = compare(emit(plan, SM86, tmp_path / "a"), emit(changed, SM86, tmp_path / "b"))
    assert diff == ["region 2 (bob-adamw) code: 1 instruction(s) differ, first at +0x40; 1296 -> 1296 bytes"]


def test_dump_names_every_part(plan, tmp_path, capsys):
    folder = emit(plan, SM90, tmp_path / "img")
    assert main(["dump", str(folder), "--no-code"]) == 0
    text = capsys.readouterr().out
    assert text.count("qmd REGISTER_COUNT = ") == 27
    assert text.count("SEND_PCAS_A") == 33
    assert "SET_OBJECT = 0x0000cbc0 (HOPPER_COMPUTE_A)" in text
    assert text.count("entry ") == 33 and "prologue entry:" in text
    assert f"c[0x0][0x210] = {bob.PARAMETERS:#018x}" in text


def test_dump_of_a_missing_folder_is_a_usage_error(tmp_path, capsys):
    assert main(["dump", str(tmp_path / "nothing")]) == 2


@pytest.mark.oracle
@pytest.mark.skipif(nvtools.nvdisasm() is None, reason="nvdisasm not installed")
@pytest.mark.parametrize("target", [SM86, SM90], ids=lambda t: t.name)
def test_dump_disassembles_each_region(plan, tmp_path, capsys, target):
    folder = emit(plan, target, tmp_path / "img")
    assert main(["dump", str(folder)]) == 0
    text = capsys.readouterr().out
    code = text.split("== code", 1)[1]
    assert code.count("EXIT") == 4 and "nvdisasm failed" not in code


def test_a_folder_whose_files_disagree_with_its_manifest_is_refused(plan, tmp_path):
    from bobc.errors import BobcError
    from bobc.nvidia.decode import read_images

    folder = emit(plan, SM86, tmp_path / "img")
    (folder / "qmd.bin").write_bytes((folder / "qmd.bin").read_bytes()[:-256])
    with pytest.raises(BobcError, match=r"qmd.bin is 6656 bytes; the manifest says 6912"):
        read_images(folder)
    (folder / "gpfifo.bin").unlink()
    assert main(["dump", str(folder)]) == 2


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
