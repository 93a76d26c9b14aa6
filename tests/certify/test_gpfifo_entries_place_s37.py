"""Probe s37 ringfuzz finding 4: a GPFIFO of fewer entries than submissions was refused at the
host's definition ("the values named here do not say where they were written") with nothing to
do; the count is the whole-program plan's field, and the refusal now says where the plan is
written and what to do."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

REPOSITORY = Path(__file__).resolve().parents[2]
PLAN = "LinReg/Build/NativeHost.bob"


def check(tmp_path, *replacements):
    shutil.copytree(REPOSITORY / "examples/linear_regression/LinReg", tmp_path / "LinReg")
    plan = tmp_path / PLAN
    text = plan.read_text(encoding="utf-8")
    for old, new in replacements:
        assert text.count(old) == 1, old
        text = text.replace(old, new)
    plan.write_text(text, encoding="utf-8")
    env = {**os.environ, "PYTHONPATH": str(REPOSITORY / "compiler"), "BOBC_CACHE_DIR": "off"}
    return subprocess.run([sys.executable, "-m", "bobc", "check", PLAN], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=600)


def test_a_gpfifo_smaller_than_the_submissions_is_refused_where_the_plan_is_written(tmp_path):
    done = check(tmp_path, ("lrSubmissionSchedule lrSubmissionCount lrSubmissionCount))",
                            "lrSubmissionSchedule lrSubmissionCount 10))"))
    assert done.returncode == 1 and "Traceback" not in done.stderr, done.stderr
    assert "the plan's GPFIFO has 10 entries for 43 submissions" in done.stderr, done.stderr
    assert "do not say where they were written" not in done.stderr, done.stderr
    assert "hint: give the GPFIFO at least one entry per submission" in done.stderr, done.stderr
