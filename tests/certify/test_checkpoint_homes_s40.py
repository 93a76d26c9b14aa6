"""A checkpoint is saved from the bytes its resume restores into (docs/host-steps.md, "Where a
checkpoint is saved from"; bobc.certify.host_steps._checkpoint_homes).

The independent reason for each expected value: LinReg's schedule reads the 32-byte payload of
checkpoint-in into its `parameters` resident (0x1100000000) and its kernels train those bytes in
place, so payload byte i must be written to checkpoint-out from parameters + i; any other address
(its `gradient` resident at 0x1100001000) publishes bytes a resume then loads as parameters
(probe s40 newuser4: a logistic regression saving its gradient resumed at loss 0.7156, not 0.3290)."""
from __future__ import annotations

import dataclasses
import os
import subprocess
import sys
from pathlib import Path

import pytest

from bobc import pipeline
from bobc.certify.host_steps import check_host_steps
from bobc.plan.host import make_step
from bobc.targets import SM86

REPO = Path(__file__).resolve().parents[2]
LINREG = REPO / "examples/linear_regression/LinReg/Build/NativeHost.bob"
PARAMETERS, GRADIENT = 0x1100000000, 0x1100001000
SAVE = 11           # LinReg's step 11: Write checkpoint-out from parameters, 32 bytes
RESTORE = 1         # its step 1: Read checkpoint-in into parameters, 32 bytes


@pytest.fixture(scope="module")
def plan():
    return pipeline.extract(pipeline.load(LINREG, SM86), None)


def with_steps(plan, steps):
    return dataclasses.replace(plan, host=dataclasses.replace(plan.host, steps=tuple(steps)))


def spliced(plan, index, *replacement):
    steps = list(plan.host.steps)
    steps[index:index + 1] = replacement
    return with_steps(plan, steps)


def homes(plan):
    return [f.message for f in check_host_steps(plan) if "checkpoint payload bytes" in f.message]


def test_the_shipped_schedule_saves_what_it_restores(plan):
    assert plan.host.steps[SAVE].host == PARAMETERS and plan.host.steps[RESTORE].host == PARAMETERS
    assert homes(plan) == []


def test_a_save_from_the_gradient_is_refused_naming_both_residents_and_the_bytes(plan):
    wrong = spliced(plan, SAVE, dataclasses.replace(plan.host.steps[SAVE], host=GRADIENT))
    [message] = homes(wrong)
    assert "step 11 (write) writes checkpoint payload bytes [0, 32)" in message
    assert "(resident gradient)" in message and "(resident parameters)" in message
    assert "write the checkpoint from the address its checkpoint-in Read fills (0x1100000000)" in message


def test_a_save_in_two_writes_refuses_only_the_half_from_elsewhere(plan):
    write = plan.host.steps[SAVE]
    halves = spliced(plan, SAVE, dataclasses.replace(write, extent=16),
                     dataclasses.replace(write, host=GRADIENT + 16, extent=16))
    [message] = homes(halves)
    assert "step 12 (write) writes checkpoint payload bytes [16, 32)" in message
    assert "resident gradient at offset 16" in message and "resident parameters at offset 16" in message


def test_writes_at_offsets_are_held_to_their_offsets(plan):
    """WriteAt places bytes at its offset: the second half first is right, the halves swapped
    (payload 0..15 from parameters + 16) are not."""
    out = "checkpoint-out"
    right = spliced(plan, SAVE, make_step("write_at", file=out, host=PARAMETERS + 16, extent=16, offset=16),
                    make_step("write_at", file=out, host=PARAMETERS, extent=16, offset=0))
    assert homes(right) == []
    swapped = spliced(plan, SAVE, make_step("write_at", file=out, host=PARAMETERS + 16, extent=16, offset=0),
                      make_step("write_at", file=out, host=PARAMETERS, extent=16, offset=16))
    found = homes(swapped)
    assert len(found) == 2 and "payload bytes [0, 16)" in found[0] and "payload bytes [16, 32)" in found[1]


def test_a_restore_in_two_reads_is_followed(plan):
    """Two 16-byte Reads, payload 0..15 into parameters and 16..31 into parameters + 16: one
    32-byte Write from parameters passes; from the gradient it is refused, once for the step (its
    first wrong range named)."""
    read = plan.host.steps[RESTORE]
    chunks = [dataclasses.replace(read, extent=16), dataclasses.replace(read, host=PARAMETERS + 16, extent=16,
                                                                        offset=16)]
    chunked = spliced(plan, RESTORE, *chunks)
    assert homes(chunked) == []
    wrong = list(chunked.host.steps)
    wrong[SAVE + 1] = dataclasses.replace(wrong[SAVE + 1], host=GRADIENT)
    [message] = homes(with_steps(plan, wrong))
    assert "step 12 (write) writes checkpoint payload bytes [0, 16)" in message


def test_a_restore_staged_through_one_area_is_not_held_to_it(plan):
    """The rule is not checked where one host area restores several payload bytes (chunks staged
    through it, moved on by launches the certifier cannot follow byte for byte): documented in
    docs/host-steps.md; such a schedule is neither refused nor called checked by this rule."""
    staged = spliced(plan, RESTORE, make_step("repeat", count=2, body=(
        dataclasses.replace(plan.host.steps[RESTORE], extent=16, stride=16),)))
    staged = with_steps(staged, [dataclasses.replace(s, host=GRADIENT) if s.kind.name == "write"
                                 and s.file == "checkpoint-out" else s for s in staged.host.steps])
    assert homes(staged) == []


def test_bobc_check_refuses_the_plan_at_the_write(tmp_path):
    """End to end: LinReg copied with its save reading lrGradientAddress; the refusal is at the
    Write's file:line:column, one finding, no traceback."""
    copy = tmp_path / "LinReg"
    import shutil
    shutil.copytree(LINREG.parents[1], copy)
    host = copy / "Build" / "NativeHost.bob"
    text = host.read_text(encoding="utf-8")
    old = "NvidiaPlanHostCheckpointOut) lrParametersAddress"
    assert text.count(old) == 1
    host.write_text(text.replace(old, "NvidiaPlanHostCheckpointOut) lrGradientAddress"), encoding="utf-8")
    line = next(i for i, l in enumerate(host.read_text().splitlines(), 1) if "CheckpointOut) lrGradientAddress" in l)
    done = subprocess.run([sys.executable, "-m", "bobc", "check", str(host)], capture_output=True, text=True,
                          cwd=tmp_path, env={**os.environ, "PYTHONPATH": str(REPO / "compiler")})
    assert done.returncode != 0
    assert f"NativeHost.bob:{line}:11: the host's step 11 (write) writes checkpoint payload bytes [0, 32)" \
        in done.stderr, done.stderr
    assert "Traceback" not in done.stderr
