"""`python -m coppelius_host.images` refuses a bad target or a kernel that does not assemble with
bobc's own message, not a Python traceback (probe-regress3 finding 6)."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
EXAMPLE = REPO / "examples" / "coppelius"


def images(cwd: Path, *args):
    env = dict(os.environ, PYTHONPATH=str(REPO / "compiler"))
    return subprocess.run([sys.executable, "-m", "coppelius_host.images", *map(str, args)], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=600)


def test_an_unknown_target_is_one_message(tmp_path):
    done = images(EXAMPLE, "sm_80", tmp_path / "out")
    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr
    assert done.stderr.splitlines()[0] == "python -m coppelius_host.images: error: unknown target 'sm_80'", done.stderr
    assert not (tmp_path / "out").exists()


def test_a_kernel_that_does_not_assemble_is_bobcs_message(tmp_path):
    copy = tmp_path / "coppelius"
    shutil.copytree(EXAMPLE, copy, ignore=shutil.ignore_patterns("__pycache__"))
    kernel = copy / "Realization/Nvidia/SM86/coppelius-copy.sass"
    text = kernel.read_text()
    assert "    LEA R0, R1, R0, 0x8\n" in text
    kernel.write_text(text.replace("    LEA R0, R1, R0, 0x8\n", "    FROB R0, R1\n", 1))
    done = images(copy, "sm_86", tmp_path / "out")
    assert done.returncode != 0
    assert "Traceback" not in done.stderr, done.stderr
    assert done.stderr.startswith("python -m coppelius_host.images: ") and "coppelius-copy.sass:" in done.stderr, \
        done.stderr
