"""Probe s37 sourcetext finding 8: a kernel source path in a plan's SM86Program must be ASCII
(docs/writing-a-plan.md); the refusal was placed at the host's definition, not at the path, and
did not say what to do.  It is placed at the path in the plan, names the byte, and says to rename."""
from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
OLD = b'b"LinReg/kernels/linreg-predict.sass"'


def test_a_kernel_source_path_that_is_not_ascii_is_refused_at_the_path(tmp_path):
    shutil.copytree(REPO / "examples/linear_regression/LinReg", tmp_path / "LinReg")
    module = tmp_path / "LinReg/Build/NativeHost.bob"
    text = module.read_bytes()
    assert text.count(OLD) == 1
    start = text.index(OLD)
    line = 1 + text[:start].count(b"\n")
    column = 1 + start - (text.rfind(b"\n", 0, start) + 1)
    module.write_bytes(text.replace(OLD, rb'b"LinReg/kernels/linreg-pr\xc3\xa9dict.sass"'))
    ran = subprocess.run([sys.executable, "-m", "bobc", "check", "LinReg/Build/NativeHost.bob"], capture_output=True,
                         cwd=tmp_path, env=dict(os.environ, BOBC_CACHE_DIR="off"), timeout=600)
    assert ran.returncode != 0
    first = ran.stderr.decode().splitlines()[0]
    assert first.startswith(f"bobc check: LinReg/Build/NativeHost.bob:{line}:{column}: error: "), first
    assert "the kernel's source should be ASCII" in first and "(byte 24 is 0xc3)" in first, first
    assert re.search(r"rename the file .* ASCII names", first), first
