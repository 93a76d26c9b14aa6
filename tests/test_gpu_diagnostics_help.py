"""The GPU diagnostics bench/README.md lists answer --help with their usage, here without a GPU, and
make nothing: sm90_gemm_bisect.py once took `--help` for its OUTDIR (a folder named --help, the cut
kernels assembled into it), cluster_probe.py died with an IndexError, sm90_cubin_records_probe.py
looked for its prebuilt cubin."""
from __future__ import annotations

import os
import subprocess
import sys

import pytest

from tests.conftest import REPO


@pytest.mark.parametrize("script", ["sm90_gemm_bisect.py", "cluster_probe.py", "sm90_cubin_records_probe.py"])
def test_help_prints_the_usage_and_makes_nothing(script, tmp_path):
    env = {**os.environ, "PYTHONPATH": str(REPO / "compiler")}
    done = subprocess.run([sys.executable, str(REPO / "bench" / "gpu" / script), "--help"], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.startswith(f"usage: {script}"), done.stdout[:500]
    assert list(tmp_path.iterdir()) == []
