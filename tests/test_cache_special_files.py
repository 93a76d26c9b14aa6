"""A file a stored result was made from that is no regular file now (a FIFO, a device) makes the
result a miss at once: the warm build or check is refused as the cold one is, with its message,
never blocked forever on the FIFO (probe s34 cache34 findings 2 and 3).  recall.py reads the
modules of a recalled program, stored.py and recall.py the kernel sources a stored verdict, plan
or outcome read."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from bobc.cli import main

REPO = Path(__file__).resolve().parents[1]

pytestmark = pytest.mark.skipif(shutil.which("gcc") is None, reason="needs gcc")


def _bobc(argv, cache) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(REPO / "compiler"), "BOBC_CACHE_DIR": str(cache)}
    try:
        return subprocess.run([sys.executable, "-m", "bobc", *argv], env=env, capture_output=True,
                              text=True, timeout=60)
    except subprocess.TimeoutExpired:
        pytest.fail(f"bobc {' '.join(argv)} did not end in 60 s (blocked on a FIFO?)")


def _warm_linreg(tmp_path, cache_dir, capsys) -> Path:
    shutil.copytree(REPO / "examples" / "linear_regression" / "LinReg", tmp_path / "LinReg")
    plan = tmp_path / "LinReg" / "Build" / "NativeHost.bob"
    assert main(["build", str(plan), "-o", str(tmp_path / "host")]) == 0
    assert main(["check", str(plan)]) == 0
    capsys.readouterr()
    assert list((cache_dir / "programs").iterdir()) and list((cache_dir / "outcomes").iterdir())
    return plan


def _fifo_in_place_of(path: Path) -> None:
    path.unlink()
    os.mkfifo(path)


def test_a_module_made_a_fifo_is_refused_warm_as_cold(cache_dir, tmp_path, capsys):
    plan = _warm_linreg(tmp_path, cache_dir, capsys)
    _fifo_in_place_of(plan.parents[1] / "Model.bob")
    build = ["build", str(plan), "-o", str(tmp_path / "host2")]
    warm, cold = _bobc(build, cache_dir), _bobc(build, "off")
    assert "Model.bob is a FIFO (named pipe), not a module file" in cold.stderr and cold.returncode == 1
    assert (warm.returncode, warm.stderr) == (cold.returncode, cold.stderr.replace(
        "bobc: compiling the C runtime (BOBC_CACHE_DIR=off: every build compiles it)\n", ""))


def test_a_kernel_source_made_a_fifo_is_refused_warm_as_cold(cache_dir, tmp_path, capsys):
    plan = _warm_linreg(tmp_path, cache_dir, capsys)
    _fifo_in_place_of(plan.parents[1] / "kernels" / "linreg-sgd.sass")
    cold = _bobc(["check", str(plan)], "off")
    assert cold.returncode == 1 and "linreg-sgd.sass" in cold.stderr
    for command in ("check", "build"):
        warm = _bobc([command, str(plan)] + (["-o", str(tmp_path / "host2")] if command == "build" else []),
                     cache_dir)
        assert warm.returncode == 1, warm.stderr
        assert warm.stderr.split(": error: ", 1)[1] == cold.stderr.split(": error: ", 1)[1]
