"""bench/run.py writes a results file that says what ran, where and when."""
from __future__ import annotations

import json
import subprocess
import sys


def test_cpu_bench_writes_its_report(repo, tmp_path):
    done = subprocess.run([sys.executable, str(repo / "bench/run.py"), "--repeats", "1",
                           "--skip-eval", "--out", str(tmp_path)], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    [path] = tmp_path.glob("cpu-*.json")
    report = json.loads(path.read_text())
    assert "bench/run.py" in report["command"]
    assert report["machine"]["cpu_count"] >= 1 and report["machine"]["platform"]
    assert report["date"].endswith("+00:00")
    names = [b["name"] for b in report["benchmarks"]]
    assert any("train invocation" in n for n in names)
    assert all(b["median"] > 0 for b in report["benchmarks"])
    assert any("PyTorch" in s["name"] for s in report["skipped"])
    assert "Skipped here (need a GPU)" in done.stdout
