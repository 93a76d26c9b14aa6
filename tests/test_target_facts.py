"""The per-target facts are read from bobc.targets, declared once (probe s32 targets findings 3
and 4): no `target.sm >= 0x90` in the cubin writer, no per-arch table that silently gives an
unknown target another's facts, no target list typed by hand, one register allocation unit."""
from __future__ import annotations

import re
from dataclasses import replace
from pathlib import Path

import pytest

from bobc import targets
from bobc.targets import SM86, SM90, TARGETS

COMPILER = Path(__file__).resolve().parents[1] / "compiler" / "bobc"


def test_no_module_asks_whether_a_target_is_sm_90_by_its_number():
    """A test of `target.sm` against a number makes a future sm_121 look like Hopper."""
    for path in ("sass/cubin.py", "nvidia/encode.py", "certify/registers.py", "sass/schedule.py"):
        text = (COMPILER / path).read_text()
        assert not re.search(r"\.sm\s*[<>=!]=?\s*0x", text), path


def test_target_lists_are_the_target_table():
    for path in ("sass/golden.py", "sass/learn.py"):
        assert '("sm_86", "sm_90")' not in (COMPILER / path).read_text(), path
    from bobc.nvidia.pushbuffer import COMPUTE_CLASSES
    assert {t.compute_class for t in TARGETS.values()} <= COMPUTE_CLASSES


def test_the_scheduler_has_a_row_for_every_target_and_refuses_another():
    from bobc.sass.schedule import schedule
    from bobc.sass.tables.arch import ENCODINGS
    assert set(ENCODINGS) == set(TARGETS)
    assert all(isinstance(e.scheduling.membar_scoreboard, bool) for e in ENCODINGS.values())
    with pytest.raises(targets.MissingTargetFact,
                       match=r"bobc.sass.tables.arch.ENCODINGS has no SASS row, so the scheduler has no latency "
                             r"facts for target 'sm_121' \(it has rows for sm_86, sm_90\): add sm_121's row there"):
        schedule([], "sm_121")


def test_the_register_unit_is_declared_once():
    from bobc.nvidia.encode import qmd_registers
    assert SM86.sm_resources.thread_register_unit == SM90.sm_resources.thread_register_unit == 8
    assert qmd_registers(17, SM90) == 24 and qmd_registers(255, SM86) == 255
    text = (COMPILER / "certify/registers.py").read_text() + (COMPILER / "nvidia/encode.py").read_text()
    assert "// 8) * 8" not in text and "REGISTER_GRANULE" not in text
    # a target allocating 16 a thread rounds to 16, in the QMD's count
    coarse = replace(SM90, sm_resources=replace(SM90.sm_resources, register_unit=512))
    assert qmd_registers(17, coarse) == 32


def test_the_tensor_map_box_bound_is_the_targets_shared_memory():
    from bobc.nvidia.tensor_map import MAX_BOX_BYTES
    # the box bound is a block's own bytes (227 KiB, sharedMemPerBlockOptin on 9.0); what a block may
    # declare holds the 0x400 reserve besides (s42)
    assert MAX_BOX_BYTES == SM90.sm_resources.block_own_shared_bytes == 227 * 1024
    assert SM90.sm_resources.block_shared_bytes == 227 * 1024 + 0x400


def test_clusters_and_early_start_are_each_one_fact():
    from bobc.nvidia.encode import RECIPES, _check_recipes, clusters_of
    assert [t.name for t in TARGETS.values() if t.clusters] == ["sm_90"]
    assert clusters_of(SM86, (2, 1, 1)) is None and clusters_of(SM90, (2, 1, 1)) is RECIPES["V04_00"].cluster
    _check_recipes()
    broken = dict(targets.TARGETS, sm_90=replace(SM90, launch_prologue=()))
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr("bobc.nvidia.encode.TARGETS", broken)
        with pytest.raises(AssertionError, match="launch_prologue"):
            _check_recipes()
        patch.setattr("bobc.nvidia.encode.TARGETS", dict(targets.TARGETS, sm_86=replace(SM86, clusters=True)))
        with pytest.raises(AssertionError, match="clusters"):
            _check_recipes()


def test_the_cubin_reads_its_facts_from_the_target():
    from bobc.sass import assemble_kernel
    from bobc.sass.cubin import write_cubin
    import tempfile
    with tempfile.TemporaryDirectory() as folder:
        source = Path(folder) / "k.sass"
        source.write_text(".kernel k\n.registers 8\n    S2R R0, SR_TID.X\n    EXIT\n")
        assembled = assemble_kernel(source, SM90)
        # sm_90's facts with sm_86's cubin facts: sm_86's cubin shape (no .nv.compat, registers
        # in .text's sh_info), so nothing but the record decides it
        mixed = replace(SM90, cubin=SM86.cubin)
        assert write_cubin(assembled, "k", mixed, 8, 32).count(b".nv.compat") == 0
        assert write_cubin(assembled, "k", SM90, 8, 32).count(b".nv.compat") == 1
        with pytest.raises(ValueError, match="has no thread-block clusters"):
            write_cubin(assembled, "k", replace(SM90, clusters=False), 8, 32, cluster=(2, 1, 1))


def test_the_commands_default_target_is_the_tables():
    from bobc.commands import _common
    assert _common.DEFAULT_TARGET == targets.DEFAULT_TARGET.name


def test_asm_given_target_points_at_arch(tmp_path, capsys):
    """probe s32 targets finding 7: `bobc asm --target sm_86` said only "unrecognized arguments"."""
    from bobc.cli import main
    source = tmp_path / "k.sass"
    source.write_text(".kernel k\n.registers 8\n    EXIT\n")
    try:
        status = main(["asm", str(source), "-o", str(tmp_path / "k.bin"), "--target", "sm_86"])
    except SystemExit as done:
        status = done.code
    err = capsys.readouterr().err
    assert status == 2 and "bobc asm: error: unrecognized arguments: --target sm_86; did you mean --arch sm_86?" in err
    assert "Traceback" not in err and not (tmp_path / "k.bin").exists()
