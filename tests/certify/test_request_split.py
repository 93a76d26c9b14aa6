"""The one schedule serves both requests (docs/host-steps.md): a predict request runs it up to its
first Operation and hands its input checkpoint on unchanged, a train request runs all of it.  The
certifier refuses a schedule that breaks that (probe s32 hostsched, probe-errors findings 1 and 4):

- finding 1: LinReg with its CheckpointPublish taken out (the checkpoint begun and written, never
  published) was certified, and `train` published the input state, step 0, exit 0: the 20
  updates it ran were dropped;
- finding 4: LinReg with its Operation step taken out was certified, and `predict` ran the
  training and published a checkpoint 20 steps on ("0 checkpoint publication(s)", "holds step 40").

Both are refused now, located at the step in the schedule's definition (file:line:column), saying
what to add; the repro copies are LinReg with the probe's one edit each."""
from __future__ import annotations

import dataclasses
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from bobc import pipeline
from bobc.certify import CertificationError, certify
from bobc.certify.host_steps import check_host_steps
from bobc.plan.host import make_step
from bobc.targets import SM86

REPO = Path(__file__).resolve().parents[2]
LINREG = REPO / "examples/linear_regression"
HOST = "LinReg/Build/NativeHost.bob"
PUBLISH = "(constructor NvidiaPlanHostSteps NvidiaPlanHostStepCheckpointPublish linRegUpdatesPerInvocation 1 lrEnd)"
OPERATION = "(constructor NvidiaPlanHostSteps NvidiaPlanHostStepOperation lrTrainSteps)"
BEGIN = "(constructor NvidiaPlanHostSteps NvidiaPlanHostStepCheckpointBegin"

NEVER_PUBLISHED = ("begins the output checkpoint and the schedule has no CheckpointPublish: a checkpoint written "
                   "but never published is dropped, and a train request hands its input checkpoint on unchanged "
                   "(the training lost); end it with NvidiaPlanHostStepCheckpointPublish 20 1 (the contract's 20 "
                   "updates per invocation) after its writes")
NO_OPERATION = ("publishes a checkpoint, but the schedule has no Operation step: a predict request runs the "
                "schedule up to its first Operation, so it would run all of it, its training included, and publish "
                "a checkpoint 20 update(s) on; add NvidiaPlanHostStepOperation where a predict ends (after its "
                "predictions and result are written, before the training submissions and the checkpoint)")


@pytest.fixture(scope="module")
def linreg():
    program = pipeline.load(LINREG / HOST, SM86)
    return pipeline.extract(program, None), getattr(program, "search_path", ())


def with_steps(plan, steps):
    return dataclasses.replace(plan, host=dataclasses.replace(plan.host, steps=tuple(steps)))


def messages(plan):
    return [f.message for f in check_host_steps(plan)]


def kinds(plan):
    return [s.kind.name for s in plan.host.steps]


# ---- the probe's two variants, through `bobc check` and `bobc run` ----

def variant(tmp_path: Path, old: str, new: str) -> Path:
    for name in ("LinReg", "reference_kernels.py", "make_record.py"):
        source = LINREG / name
        (shutil.copytree if source.is_dir() else shutil.copy)(source, tmp_path / name)
    path = tmp_path / HOST
    text = path.read_text()
    assert text.count(old) == 1, old
    path.write_text(text.replace(old, new))
    return path


def bobc(*arguments, cwd: Path) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=str(REPO / "compiler"))
    return subprocess.run([sys.executable, "-m", "bobc", *map(str, arguments)], capture_output=True, text=True,
                          cwd=cwd, env=env)


def place(plan: Path, text: str) -> str:
    """`plan:line:column` of the first line holding `text`, at `text`'s column."""
    line = next(n for n, line in enumerate(plan.read_text().splitlines(), 1) if text in line)
    return f"{HOST}:{line}:{plan.read_text().splitlines()[line - 1].index(text) + 1}"


def test_a_checkpoint_written_but_never_published_is_refused_at_its_begin(tmp_path):
    plan = variant(tmp_path, PUBLISH, "lrEnd")
    result = bobc("check", HOST, "--target", "sm_86", cwd=tmp_path)
    assert result.returncode == 1 and "Traceback" not in result.stderr, result.stderr
    where = place(plan, BEGIN)
    assert result.stderr.startswith(f"bobc check: {where}: error: the plan is not certified (1 fault):\n"
                                    f"  - {where}: the host's step 10 (checkpoint_begin) {NEVER_PUBLISHED}\n"), \
        result.stderr


def test_a_schedule_with_no_operation_is_refused_at_its_publication(tmp_path):
    plan = variant(tmp_path, OPERATION, "lrTrainSteps")
    result = bobc("check", HOST, "--target", "sm_86", cwd=tmp_path)
    assert result.returncode == 1 and "Traceback" not in result.stderr, result.stderr
    where = place(plan, PUBLISH)
    assert result.stderr.startswith(f"bobc check: {where}: error: the plan is not certified (1 fault):\n"
                                    f"  - {where}: the host's step 11 (checkpoint_publish) {NO_OPERATION}\n"), \
        result.stderr


@pytest.mark.parametrize("operation,old,new", [("train", PUBLISH, "lrEnd"), ("predict", OPERATION, "lrTrainSteps")],
                         ids=["train-unpublished", "predict-without-operation"])
def test_the_probes_runs_are_refused_before_anything_is_written(tmp_path, operation, old, new):
    """The probe's repros: `train` of the unpublished variant (it published step 0) and `predict` of
    the variant without an Operation (it published step 40) stop at certification, nothing written."""
    variant(tmp_path, old, new)
    subprocess.run([sys.executable, "make_record.py", "-o", "record.bin"], cwd=tmp_path, check=True)
    result = bobc("run", HOST, operation, "--reference", "--target", "sm_86", "--input", "record.bin",
                  "--checkpoint-out", "out.bin", "--predictions", "p.bin", "--result", "r.bin", cwd=tmp_path)
    assert result.returncode == 1 and "Traceback" not in result.stderr, result.stderr
    assert "the plan is not certified (1 fault)" in result.stderr
    assert not any((tmp_path / name).exists() for name in ("out.bin", "p.bin", "r.bin"))


# ---- the rule, on LinReg's schedule with steps moved ----

def test_linregs_schedule_is_split_as_the_docs_say(linreg):
    plan, folders = linreg
    assert kinds(plan) == ["read", "read", "submit", "write", "write", "write", "operation", "submit", "write_at",
                           "write_at", "checkpoint_begin", "write", "checkpoint_publish"]
    assert messages(plan) == []
    certify(plan, SM86, folders=folders)


def test_a_publication_before_the_operation_is_refused_naming_both(linreg):
    plan, folders = linreg
    steps = list(plan.host.steps)
    late = with_steps(plan, [*steps[:6], *steps[7:], steps[6]])         # the Operation last
    with pytest.raises(CertificationError) as caught:
        certify(late, SM86, folders=folders)
    assert [f.message for f in caught.value.findings if f.kind == "host-step"] == [
        "the host's step 11 (checkpoint_publish) publishes a checkpoint before the schedule's first Operation "
        "(step 12 (operation)): a predict request runs the schedule up to there, so it would publish it and move "
        "the step on; put the Operation before the training submissions and the checkpoint"]


def test_training_after_the_operation_that_publishes_nothing_is_refused(linreg):
    plan, _ = linreg
    steps = list(plan.host.steps)
    assert messages(with_steps(plan, steps[:10])) == [
        "the host's step 7 (submit) comes after the schedule's first Operation (step 6 (operation)), where a train "
        "request's updates are, but no checkpoint is published after it: a train request would hand its input "
        "checkpoint on unchanged (the training lost); write the checkpoint after the training (CheckpointBegin, "
        "Write of checkpoint-out, NvidiaPlanHostStepCheckpointPublish 20 1 (the contract's 20 updates per "
        "invocation))"]
    # with nothing after the Operation a train is a predict: nothing is lost
    assert messages(with_steps(plan, steps[:7])) == []


def test_a_write_after_the_last_publication_is_refused(linreg):
    plan, _ = linreg
    steps = list(plan.host.steps)
    write = steps[11]
    assert (write.kind.name, write.file) == ("write", "checkpoint-out")
    assert messages(with_steps(plan, [*steps, write])) == [
        "the host's step 13 (write) writes 32 bytes of the output checkpoint after the last CheckpointPublish: a "
        "checkpoint written but never published is dropped, and a train request hands its input checkpoint on "
        "unchanged (the training lost); end it with NvidiaPlanHostStepCheckpointPublish 20 1 (the contract's 20 "
        "updates per invocation) after its writes"]


def test_repeats_count_by_their_first_and_last_iterations(linreg):
    """A repeat's body runs first in its first iteration and last in its last: a body that
    publishes and then begins again leaves its last checkpoint unpublished; a repeat of count 0
    runs nothing, so the publication inside it publishes nothing."""
    plan, _ = linreg
    steps = list(plan.host.steps)
    begin, write, publish = steps[10:13]
    again = with_steps(plan, [*steps[:10], make_step("repeat", count=3, body=(begin, write, publish, begin, write))])
    assert messages(again) == [
        "the host's step 10's body: step 3 (checkpoint_begin) " + NEVER_PUBLISHED.replace(
            "and the schedule has no CheckpointPublish", "after the last CheckpointPublish")]
    never = with_steps(plan, [*steps[:10], make_step("repeat", count=0, body=(begin, write, publish))])
    assert messages(never) == [
        "the host's step 7 (submit) comes after the schedule's first Operation (step 6 (operation)), where a train "
        "request's updates are, but no checkpoint is published after it: a train request would hand its input "
        "checkpoint on unchanged (the training lost); write the checkpoint after the training (CheckpointBegin, "
        "Write of checkpoint-out, NvidiaPlanHostStepCheckpointPublish 20 1 (the contract's 20 updates per "
        "invocation))"]
    twice = with_steps(plan, [*steps[:10], make_step("repeat", count=2, body=(begin, write, publish))])
    assert messages(twice) == []


def test_a_schedule_that_never_touches_the_checkpoint_needs_no_operation(linreg):
    """A request that trains nothing (no checkpoint begun, written or published) hands its state on
    unchanged, as runtime_c and the reference runner do: nothing to refuse."""
    plan, _ = linreg
    assert messages(with_steps(plan, plan.host.steps[:6])) == []
