"""Probe s43 reqcert finding 1: a plan host lowered to one native program (PlanHost.bob
nvidiaPlanHostRequestCommands[Fresh], seed 004's shape) had its schedule held to none of the
host-step rules: `bobc build` wrote a request host whose schedule writes the predictions after
their Close, or publishes a checkpoint short of the contract's payload, where a plan host with
the same schedule is refused (docs/host-steps.md).  The build now finds the schedule in the
program's expression (bobc.certify.request_schedule) and refuses those at the step's
file:line:column with the plan host's message.

The expected faults come from the docs' rules, not from the implementation: docs/host-steps.md,
Close ("no step writes them again (the certifier refuses a write of the file after its Close)"),
and CheckpointPublish with docs/native-host.md's RequestCheckpointPublish ("the payload (exactly
the contract's bytes, else status 1)"): the synthetic contract's payload is 40 bytes, gathered as
16 + 16 + 8; a tail of 4 publishes 36."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PLANS = ROOT / "tests" / "native" / "plans" / "Native"
CLOSE = "  (constructor NvidiaPlanHostSteps NvidiaPlanHostStepClose rqPredictions\n"
SCHEDULE_END = "  rqEnd))))))))))))))))))))))))))))"
TAIL_GATHER = "(rqWrite rqCheckpointOut rqStaging 8\n"


def build(tmp_path: Path, *replacements: tuple[str, str]) -> subprocess.CompletedProcess:
    folder = tmp_path / "Native"
    shutil.copytree(PLANS, folder)
    plan = folder / "Request.bob"
    text = plan.read_text(encoding="utf-8")
    for old, new in replacements:
        assert text.count(old) == 1, old
        text = text.replace(old, new)
    plan.write_text(text, encoding="utf-8")
    env = dict(os.environ, PYTHONPATH=str(ROOT / "compiler"), BOBC_CACHE_DIR="off")
    return subprocess.run([sys.executable, "-m", "bobc", "build", "Native/Request.bob", "--entry", "requestHost",
                           "-o", str(tmp_path / "host")], cwd=tmp_path, env=env, capture_output=True, text=True,
                          timeout=300)


def place(tmp_path: Path, needle: str, after: str | None = None) -> str:
    lines = (tmp_path / "Native" / "Request.bob").read_text(encoding="utf-8").splitlines()
    start = 0 if after is None else next(i for i, text in enumerate(lines) if after in text) + 1
    line = next(i for i, text in enumerate(lines) if i >= start and needle in text)
    return f"Native/Request.bob:{line + 1}:{lines[line].index(needle) + 1}"


def test_the_synthetic_request_host_builds(tmp_path):
    """The fixture as tests/native/test_native_request.py runs it: no fault."""
    done = build(tmp_path)
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "host").is_file()


def test_a_write_after_close_is_refused_at_the_write(tmp_path):
    late = "  (rqWrite rqPredictions (nat-add rqStaging 1024) 4\n"
    done = build(tmp_path, (CLOSE, CLOSE + late), (SCHEDULE_END, SCHEDULE_END + ")"))
    assert done.returncode == 1 and "Traceback" not in done.stderr, done.stderr
    at = place(tmp_path, "(rqWrite rqPredictions (nat-add rqStaging 1024) 4", after="NvidiaPlanHostStepClose")
    assert f"  - {at}: the host's step 41 (write) writes predictions after step 40 (close) closed it: a closed " \
           "output is finished and no step writes it again; move the Close after the file's last write" \
           in done.stderr, done.stderr
    assert not (tmp_path / "host").exists()


def test_a_short_checkpoint_publication_is_refused(tmp_path):
    done = build(tmp_path, (TAIL_GATHER, TAIL_GATHER.replace(" 8\n", " 4\n")))
    assert done.returncode == 1 and "Traceback" not in done.stderr, done.stderr
    at = place(tmp_path, "(constructor NvidiaPlanHostSteps NvidiaPlanHostStepCheckpointPublish updates updates tail)")
    for step in (23, 32):           # both periods' publications
        assert f"  - {at}: the host's step {step} (checkpoint_publish) publishes a checkpoint of 36 bytes, but the " \
               "contract's payload is 40 bytes" in done.stderr, done.stderr
    assert not (tmp_path / "host").exists()
