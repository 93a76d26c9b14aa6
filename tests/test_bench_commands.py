"""A benchmark's results name the command that made them, as a shell reads it: split again, the
recorded command gives the very arguments the script was run with (an empty --targets among them),
and every argument given is there (build_bench once recorded only --profile and --no-bytecode)."""
from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys

from tests.conftest import REPO


def run(script, *args, tmp_path):
    env = {**os.environ, "PYTHONPATH": str(REPO / "compiler"), "TMPDIR": str(tmp_path)}
    done = subprocess.run([sys.executable, script, *args], cwd=REPO, env=env, capture_output=True, text=True,
                          timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    return done


def test_sim_bench_records_an_empty_targets_argument_so_that_it_runs_again(tmp_path):
    out = tmp_path / "results"
    args = ["--targets", "", "--repeats", "1", "--out", str(out)]
    run("bench/sim_bench.py", *args, tmp_path=tmp_path)
    (report,) = out.glob("sim-*.json")
    command = json.loads(report.read_text())["command"]
    assert shlex.split(command) == ["python", "bench/sim_bench.py", *args]
    (page,) = out.glob("sim-*.md")
    assert f"Command: `{command}`" in page.read_text()


def test_build_bench_records_every_argument_it_was_given(tmp_path):
    out = tmp_path / "results"
    args = ["--runs", "1", "--out", str(out), "--note", "a note with spaces"]
    run("bench/build_bench.py", *args, tmp_path=tmp_path)
    (report,) = out.glob("build-*.json")
    assert shlex.split(json.loads(report.read_text())["command"]) == ["python", "bench/build_bench.py", *args]
