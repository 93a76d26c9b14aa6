"""A reference kernels file that bobc found in the plan's root folder (no --kernels given) and
cannot load is named as the plan's file, not as --kernels (probe s30 cli finding 8).  Before:
"cannot load --kernels .../reference_kernels.py: ..." although the user gave no --kernels."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


def run(tmp_path, *extra):
    env = {**os.environ, "PYTHONPATH": str(REPO / "compiler"), "BOBC_CACHE_DIR": str(tmp_path / "cache")}
    (tmp_path / "in.bin").write_bytes(b"")
    return subprocess.run([sys.executable, "-m", "bobc", "run", "lr/LinReg/Build/NativeHost.bob", "train",
                           "--reference", "--input", "in.bin", "--checkpoint-out", "c", "--predictions", "p",
                           "--result", "r", *extra], cwd=tmp_path, env=env, capture_output=True, text=True,
                          timeout=300)


@pytest.fixture
def plan(tmp_path):
    shutil.copytree(REPO / "examples/linear_regression/LinReg", tmp_path / "lr/LinReg")
    (tmp_path / "lr/reference_kernels.py").write_text("import no_such_module_for_bobc\n")
    return tmp_path


def test_the_default_kernels_file_is_not_called_kernels(plan):
    done = run(plan)
    assert done.returncode == 2, done.stderr
    assert done.stderr.splitlines()[0] == (
        f"bobc run: error: cannot load the plan's reference kernels file {plan / 'lr/reference_kernels.py'} "
        "(no --kernels given): ModuleNotFoundError at line 1: No module named 'no_such_module_for_bobc'"), done.stderr
    assert "--kernels" not in done.stderr.splitlines()[0].replace("(no --kernels given)", "") and "Traceback" not in done.stderr


def test_a_given_kernels_file_is_still_called_kernels(plan):
    done = run(plan, "--kernels", "lr/reference_kernels.py")
    assert done.returncode == 2, done.stderr
    assert done.stderr.splitlines()[0] == (
        "bobc run: error: cannot load --kernels lr/reference_kernels.py: ModuleNotFoundError at line 1: "
        "No module named 'no_such_module_for_bobc'"), done.stderr
