"""`bobc asm --register-budget` takes a whole number of at least 1 (probe s30 cli finding 8).
Before, -1 and 0 were taken, and the kernel was then refused as "over its budget of -1" (exit 1);
now the option itself is refused, one usage line (exit 2), before the source is read."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


def asm(tmp_path, budget):
    source = tmp_path / "k.sass"
    source.write_text(".kernel k\nMOV R4, RZ\nEXIT\n")
    env = {**os.environ, "PYTHONPATH": str(REPO / "compiler")}
    return subprocess.run([sys.executable, "-m", "bobc", "asm", str(source), "-o", str(tmp_path / "k.bin"),
                           "--register-budget", budget], env=env, capture_output=True, text=True, timeout=120)


@pytest.mark.parametrize("budget", ["-1", "0"])
def test_a_budget_below_one_is_a_usage_error(tmp_path, budget):
    done = asm(tmp_path, budget)
    assert done.returncode == 2, done.stderr
    assert done.stderr.splitlines()[0] == f"bobc asm: error: argument --register-budget: must be at least 1: {budget}"
    assert "over its budget" not in done.stderr and "Traceback" not in done.stderr
    assert not (tmp_path / "k.bin").exists()


def test_a_budget_the_kernel_fits_is_taken(tmp_path):
    done = asm(tmp_path, "64")
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "k.bin").exists()
