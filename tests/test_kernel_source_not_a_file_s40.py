"""A kernel source the plan names that is there but is not a regular file (a FIFO, a folder, a
broken link) is refused saying what is there, at the path in the plan, as an imported module's
path is (docs/language.md, "Modules": "a folder, a broken link or a FIFO at a module's path is
refused saying what is there").  It was refused as "kernel source LinReg/kernels/linreg-sgd.sass
is in none of: ..." with "did you mean LinReg/kernels/linreg-loss-grad.sass?": the file the plan
names is right there (probe s40 docs9 finding 2).  A FIFO is never opened (a read would block)."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]


@pytest.mark.parametrize("make, what", [
    (os.mkfifo, "a FIFO (named pipe)"),
    (os.mkdir, "a folder"),
    (lambda path: os.symlink("gone.sass", path), "a broken symbolic link (to gone.sass, which does not exist)"),
])
def test_a_kernel_source_that_is_not_a_file_is_named_as_what_it_is(tmp_path, make, what):
    shutil.copytree(REPO / "examples" / "linear_regression" / "LinReg", tmp_path / "LinReg")
    source = tmp_path / "LinReg" / "kernels" / "linreg-sgd.sass"
    source.unlink()
    make(source)
    result = subprocess.run([sys.executable, "-m", "bobc", "check", "LinReg/Build/NativeHost.bob"],
                            capture_output=True, text=True, cwd=tmp_path, timeout=300,
                            env={**os.environ, "PYTHONPATH": str(REPO / "compiler"), "BOBC_CACHE_DIR": "off"})
    assert result.returncode == 1 and "Traceback" not in result.stderr, result.stderr
    first = result.stderr.splitlines()[0]
    assert first == (f"bobc check: LinReg/Build/NativeHost.bob:44:59: error: kernel source "
                     f"LinReg/kernels/linreg-sgd.sass: LinReg/kernels/linreg-sgd.sass is {what}, not a SASS "
                     f"source file"), first
    assert "is in none of" not in result.stderr and "did you mean" not in result.stderr
