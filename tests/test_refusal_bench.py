"""bench/refusal_bench.py times `bobc check` refusing a copy of Bob past a limit (README.md, docs/limits.md:
0.7 s, bench/results/refusal.json).  What it prints holds its samples and says when and on which tree;
a copy that is not refused (too few updates asked) is not reported as the refusal's time."""
from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys

from tests.conftest import REPO


def run(*args, tmp_path):
    env = {**os.environ, "TMPDIR": str(tmp_path)}
    return subprocess.run([sys.executable, "bench/refusal_bench.py", *args], cwd=REPO, env=env,
                          capture_output=True, text=True, timeout=300)


def test_the_result_holds_its_samples_date_and_commit(tmp_path):
    done = run("--repeats", "2", tmp_path=tmp_path)
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert result["exit"] == 1
    for key in ("wall_s", "cpu_s"):
        samples = result[key]["samples"]
        assert len(samples) == 2 and result[key]["median"] == round(statistics.median(samples), 3)
    assert result["date"] and result["commit"] and result["platform"]


def test_a_copy_that_passes_the_check_is_not_timed_as_the_refusal(tmp_path):
    done = run("--repeats", "1", "--updates", "20", tmp_path=tmp_path)
    assert done.returncode == 1
    assert "was not the refusal timed here (exit 0" in done.stderr
