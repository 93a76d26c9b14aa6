"""A kernel source the plan names that is past the 4 MiB bound (docs/limits.md, "Files") was refused
at the host's `def` (`NativeHost.bob:279:5`, `def linRegNativeHost`), far from the path the plan
names (probe s40 docs9, left): the first reader of the file (the kernel search's `.kernel` name) had
no place, and the evaluator placed it at the definition being extracted.  It is refused at the
path's byte string in the SM86Program now, as a FIFO there is (tests/test_kernel_source_not_a_file_s40.py),
naming the file and the bound, exit 1 (README's exit codes: a file bobc refuses)."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
BOUND = 4 << 20          # docs/limits.md: 4 MiB for a SASS source


def test_a_kernel_source_past_the_bound_is_refused_at_its_path_in_the_plan(tmp_path):
    shutil.copytree(REPO / "examples" / "linear_regression" / "LinReg", tmp_path / "LinReg")
    source = tmp_path / "LinReg" / "kernels" / "linreg-sgd.sass"
    text = source.read_bytes()
    comment = b"// " + b"x" * 76 + b"\n"
    source.write_bytes(text + comment * ((BOUND - len(text)) // len(comment) + 1))
    assert source.stat().st_size > BOUND
    # the place, worked out from the plan's text: the line that names the file, the column of its b"
    module = tmp_path / "LinReg" / "Build" / "NativeHost.bob"
    named = b'b"LinReg/kernels/linreg-sgd.sass"'
    line, at = next((k, row.index(named)) for k, row in enumerate(module.read_bytes().splitlines(), 1)
                    if named in row)
    result = subprocess.run([sys.executable, "-m", "bobc", "check", "LinReg/Build/NativeHost.bob"],
                            capture_output=True, text=True, cwd=tmp_path, timeout=300,
                            env={**os.environ, "PYTHONPATH": str(REPO / "compiler"), "BOBC_CACHE_DIR": "off"})
    assert result.returncode == 1 and "Traceback" not in result.stderr, result.stderr
    first = result.stderr.splitlines()[0]
    assert first.startswith(f"bobc check: LinReg/Build/NativeHost.bob:{line}:{at + 1}: error: kernel source "
                            f"LinReg/kernels/linreg-sgd.sass: "), first
    assert f"{source.stat().st_size:,} bytes" in first and "4 MiB" in first, first
