"""`bash .ci/run` leaves nothing in TMPDIR: it kept its copy of the whole suite's transcript
(mktemp) after every run (probe s36 parallelsuites: 20 such logs in /tmp here).  Run here with a
stand-in `make` on PATH, so that no suite runs."""
from __future__ import annotations

import os
import shutil
import subprocess

import pytest

from tests.conftest import REPO


@pytest.mark.parametrize("said, status", [("3 passed in 1.00s", 0), ("1 failed, 2 passed in 1.00s", 1)])
def test_ci_run_removes_its_log(tmp_path, said, status):
    if shutil.which("gcc") is None:
        pytest.fail("gcc is needed (.ci/run installs it otherwise)")
    bin_folder, temporary = tmp_path / "bin", tmp_path / "tmp"
    bin_folder.mkdir()
    temporary.mkdir()
    make = bin_folder / "make"
    make.write_text(f"#!/bin/sh\necho '{said}'\nexit {status}\n")
    make.chmod(0o755)
    done = subprocess.run(["bash", str(REPO / ".ci/run")], capture_output=True, text=True, timeout=60,
                          env={**os.environ, "PATH": f"{bin_folder}:{os.environ['PATH']}", "TMPDIR": str(temporary)})
    assert done.returncode == status and said in done.stdout, done.stdout + done.stderr
    assert list(temporary.iterdir()) == []
