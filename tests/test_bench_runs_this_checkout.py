"""bench/build_bench.py and bench/sim_bench.py time this checkout's bobc -- the one whose commit they
record and whose examples they build -- not whichever `bobc` the environment finds first (an installed
one, another checkout's on PYTHONPATH).  Here a `bobc` that only fails stands first on PYTHONPATH."""
from __future__ import annotations

import json
import os
import subprocess
import sys

from tests.conftest import REPO


def environment(tmp_path):
    stub = tmp_path / "elsewhere" / "bobc"
    stub.mkdir(parents=True)
    (stub / "__init__.py").write_text("__file__ = __file__\n")
    (stub / "__main__.py").write_text("import sys\nsys.exit('not this checkout\\'s bobc')\n")
    return {**os.environ, "PYTHONPATH": str(tmp_path / "elsewhere"), "TMPDIR": str(tmp_path)}


def test_build_bench_times_this_checkouts_bobc(tmp_path):
    out = tmp_path / "out"
    done = subprocess.run([sys.executable, "bench/build_bench.py", "--runs", "1", "--out", str(out)], cwd=REPO,
                          env=environment(tmp_path), capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    (report,) = out.glob("build-*.json")
    assert json.loads(report.read_text())["bobc"] == str(REPO / "compiler" / "bobc" / "__init__.py")


def test_sim_bench_times_this_checkouts_bobc_sim(tmp_path):
    out = tmp_path / "out"
    done = subprocess.run([sys.executable, "bench/sim_bench.py", "--targets", "sm_86", "--repeats", "1",
                           "--out", str(out)], cwd=REPO, env=environment(tmp_path), capture_output=True, text=True,
                          timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    assert len(list(out.glob("sim-*.json"))) == 1
