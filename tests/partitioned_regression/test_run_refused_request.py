"""`bobc run PLAN native --entry E` of a host the plan refuses to build (its artifact is b""): it
says what `bobc build` says, not that a host file is damaged (probe s29 seed003 finding 4)."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

REPOSITORY = Path(__file__).resolve().parents[2]
EXAMPLE = REPOSITORY / "examples/partitioned_regression"
UUID = "".join(f"\\x{b:02x}" for b in range(16))


def test_a_refused_request_is_not_called_a_damaged_host(tmp_path):
    plan = tmp_path / "Pair.bob"
    plan.write_text("module Pair\n\nimport PartitionedRegression.Build.Workers\n\n"
                    f'def worker2 : Bytes = (coordinateH200Worker b"{UUID}" 0 2 47511 0 1 64)\n')
    said = {}
    for command in (["build", str(plan), "--entry", "worker2", "-o", str(tmp_path / "host")],
                    ["run", str(plan), "native", "m", "w0", "a0", "w1", "a1", "rb", "r.bin", "--entry", "worker2",
                     "--reference"]):
        done = subprocess.run([sys.executable, "-m", "bobc", *command, "-I", str(EXAMPLE)], capture_output=True,
                              text=True, timeout=300, cwd=tmp_path,
                              env={**os.environ, "PYTHONPATH": str(REPOSITORY / "compiler")})
        said[command[0]] = (done.returncode, done.stderr.replace(f"bobc {command[0]}: ", "bobc: "))
    assert said["run"] == said["build"]
    status, stderr = said["run"]
    assert status == 1 and "worker2 evaluates to empty bytes: the plan built no host for this request" in stderr
    assert "damaged" not in stderr
