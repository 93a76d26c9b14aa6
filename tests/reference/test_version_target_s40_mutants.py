"""`--version` alone through `bobc run --reference` and `bobc sim` is the version text of the host
built for the --target given, not the default's (probe s40 mutants5: the s40 three-executor test
used the default target only, so printing the default target's text whatever --target said
passed).  Expected lines by NVIDIA's class headers: sm_86's compute class is AMPERE_COMPUTE_B,
0xc7c0 (clc7c0.h); sm_90's HOPPER_COMPUTE_A, 0xcbc0 (clcbc0.h)."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
PLAN = REPO / "examples/linear_regression/LinReg/Build/NativeHost.bob"
CLASS = {"sm_86": "compute class: 0xc7c0 (AMPERE_COMPUTE_B)", "sm_90": "compute class: 0xcbc0 (HOPPER_COMPUTE_A)"}


@pytest.mark.parametrize("command", [["run", "--reference"], ["sim"]])
@pytest.mark.parametrize("target", sorted(CLASS))
def test_version_names_the_target_asked_for(tmp_path, command, target):
    done = subprocess.run([sys.executable, "-m", "bobc", *command, str(PLAN), "--target", target, "--version"],
                          capture_output=True, text=True, cwd=tmp_path, timeout=300,
                          env={**os.environ, "PYTHONPATH": str(REPO / "compiler")})
    assert (done.returncode, done.stderr) == (0, ""), done.stderr
    lines = done.stdout.splitlines()
    assert f"target: {target} " in done.stdout and CLASS[target] in lines, done.stdout
