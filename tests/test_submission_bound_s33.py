"""Probe s33 docs finding 1: a plan whose submission schedule is built by a loop is held to the
certifier's submission bound (certify/limits.py SUBMISSION_COUNT) as soon as the loop ends, as its
launch schedule is held to the launch bound: refused in seconds, not after the plan's arena
certificate has walked every launch (minutes).  The message's iteration count says where it was
refused (the loop's end); how long that takes is bench/refusal_bench.py's to measure, not a test's."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

REPOSITORY = Path(__file__).resolve().parents[1]
PLAN = "LinReg/Build/NativeHost.bob"

# every launch issued twice, one submission each, built one launch an iteration
LOOPED = """def lrSubmitOne =
  (lambda unrestricted launch : Nat . (lambda unrestricted semaphore : Nat .
    (constructor NvidiaSubmissionSchedule NvidiaSubmissionScheduleOne
      (constructor NvidiaSubmissionBatch NvidiaSubmissionBatchValue b"linreg-submission" semaphore
        (constructor NvidiaLaunchReferences NvidiaLaunchReferencesRange launch 1)))))

def lrSubmissionSchedule : (family NvidiaSubmissionSchedule) =
  (nat-eliminate (lambda unrestricted current : Nat . (family NvidiaSubmissionSchedule))
    (lrSubmitEach 1 1 0)
    (lambda unrestricted k : Nat . (lambda unrestricted earlier : (family NvidiaSubmissionSchedule) .
      (constructor NvidiaSubmissionSchedule NvidiaSubmissionScheduleAppend earlier
        (constructor NvidiaSubmissionSchedule NvidiaSubmissionScheduleAppend
          (lrSubmitOne k (naturalMultiply (naturalAdd k k) prSemaphoreStride))
          (lrSubmitOne k (naturalMultiply (naturalAdd (naturalAdd k k) 1) prSemaphoreStride))))))
    lrLaunchCount)
def lrSubmissionCount : Nat = (naturalAdd (naturalAdd lrLaunchCount lrLaunchCount) 1)
"""


def test_a_submission_schedule_a_loop_builds_past_the_bound_is_refused_in_seconds(tmp_path):
    shutil.copytree(REPOSITORY / "examples/linear_regression/LinReg", tmp_path / "LinReg")
    model = tmp_path / "LinReg/Model.bob"
    text = model.read_text(encoding="utf-8")
    old = "def linRegUpdatesPerInvocation : Nat = 20"
    assert text.count(old) == 1
    model.write_text(text.replace(old, "def linRegUpdatesPerInvocation : Nat = 20000"), encoding="utf-8")
    plan = tmp_path / PLAN
    text = plan.read_text(encoding="utf-8")
    start = text.index("def lrSubmissionSchedule ")
    end = text.index("\n", text.index("def lrSubmissionCount ")) + 1
    plan.write_text(text[:start] + LOOPED + text[end:], encoding="utf-8")
    # 20,000 updates: 40,002 launches (within the launch bound), 80,005 submissions (past 65,536)
    env = {**os.environ, "PYTHONPATH": str(REPOSITORY / "compiler"), "BOBC_CACHE_DIR": "off"}
    done = subprocess.run([sys.executable, "-m", "bobc", "check", PLAN], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=600)     # a hang guard: 92 s at load 10 on 2 cores
    assert done.returncode == 1 and "Traceback" not in done.stderr, done.stderr
    assert ("builds a NvidiaSubmissionSchedule of 80,005 submissions (40,002 iterations): more than "
            "the limit of 65,536") in done.stderr, done.stderr
    assert "in definition " in done.stderr, done.stderr
