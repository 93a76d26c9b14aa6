"""Probe s37 ringfuzz findings 1 and 2: what the hosts cannot issue is refused by the certifier,
at the step, before anything runs.  The plan host issues the ring image's entries from where the
Submits before it ended up to each Submit's gpPut (docs/host-steps.md), one entry a submission, so

- a Submit past the plan's submissions was certified and then stopped `bobc run --reference`,
  `bobc sim` and the C host at run time (after the forward had run);
- a Submit below an earlier one was certified; the simulator and the C host stopped at it saying
  "the ring holds 43 entries", and the reference runner issued nothing and published a checkpoint
  of 20 updates that no update had made;
- a Stamp names a submission's semaphore: one past the plan's stopped the C host."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

REPOSITORY = Path(__file__).resolve().parents[2]
PLAN = "LinReg/Build/NativeHost.bob"
TRAIN_SUBMIT = "(constructor NvidiaPlanHostSteps NvidiaPlanHostStepSubmit lrSubmissionCount 0"


def check(tmp_path, *replacements, drop_proof=False, before_train_steps=""):
    """`bobc check` of a copy of LinReg's host with `replacements` made (each text once), its
    lrHostIssuesEverySubmission proof dropped if asked, `before_train_steps` put before lrTrainSteps."""
    shutil.copytree(REPOSITORY / "examples/linear_regression/LinReg", tmp_path / "LinReg")
    plan = tmp_path / PLAN
    text = plan.read_text(encoding="utf-8")
    for old, new in replacements:
        assert text.count(old) == 1, old
        text = text.replace(old, new)
    if drop_proof:      # the plan's own statement that its host issues every submission, once
        start = text.index("def lrHostIssuesEverySubmission ")
        end = text.index("(refl Nat lrSubmissionCount)", start) + len("(refl Nat lrSubmissionCount)")
        text = text[:start] + text[end:]
    text = text.replace("\ndef lrTrainSteps ", before_train_steps + "\ndef lrTrainSteps ", 1)
    plan.write_text(text, encoding="utf-8")
    env = {**os.environ, "PYTHONPATH": str(REPOSITORY / "compiler"), "BOBC_CACHE_DIR": "off"}
    return subprocess.run([sys.executable, "-m", "bobc", "check", PLAN], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=600)


def line_of(tmp_path, definition: str) -> int:
    lines = (tmp_path / PLAN).read_text(encoding="utf-8").splitlines()
    return next(i for i, line in enumerate(lines, 1) if line.startswith(f"def {definition} "))


def test_the_unchanged_plan_is_certified(tmp_path):
    done = check(tmp_path)
    assert done.returncode == 0, done.stderr


def test_a_submit_past_the_plans_submissions_is_refused_at_the_step(tmp_path):
    done = check(tmp_path, (TRAIN_SUBMIT, TRAIN_SUBMIT.replace("lrSubmissionCount 0",
                                                                "(naturalAdd lrSubmissionCount 2) 0")),
                 drop_proof=True)
    assert done.returncode == 1 and "Traceback" not in done.stderr, done.stderr
    assert ("submits the ring up to entry 45, but the plan has 43 submissions" in done.stderr), done.stderr
    assert f"{PLAN}:{line_of(tmp_path, 'lrTrainSteps')}:5: the host's step" in done.stderr, done.stderr


def test_a_submit_below_an_earlier_one_is_refused_at_the_step(tmp_path):
    done = check(tmp_path, (TRAIN_SUBMIT, TRAIN_SUBMIT.replace("lrSubmissionCount 0", "1 0")), drop_proof=True)
    assert done.returncode == 1 and "Traceback" not in done.stderr, done.stderr
    assert ("submits the ring up to entry 1, but the Submits before it already issued it up to 2"
            in done.stderr), done.stderr
    assert f"{PLAN}:{line_of(tmp_path, 'lrTrainSteps')}:5: the host's step" in done.stderr, done.stderr


def test_a_stamp_of_no_submission_is_refused(tmp_path):
    stamped = TRAIN_SUBMIT.replace("lrSubmissionCount 0", "lrSubmissionCount 0\n    "
                                   "(constructor NvidiaPlanHostSteps NvidiaPlanHostStepStamp lrSubmissionCount 0 0")
    done = check(tmp_path, (TRAIN_SUBMIT, stamped),
                 ("NvidiaPlanHostStepCheckpointPublish linRegUpdatesPerInvocation 1 lrEnd))))))",
                  "NvidiaPlanHostStepCheckpointPublish linRegUpdatesPerInvocation 1 lrEnd)))))))"))
    assert done.returncode == 1 and "Traceback" not in done.stderr, done.stderr
    assert "reads the timestamp of submission 43, but the plan has 43" in done.stderr, done.stderr
