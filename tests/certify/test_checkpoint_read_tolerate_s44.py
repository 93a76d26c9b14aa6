"""A Read of the input checkpoint with tolerateEmpty other than 1 is refused at the step (probe s44
newuser9, finding 4).

specs/Platform/Linux/Nvidia/PlanHost.bob says of NvidiaPlanHostStepRead: "With `tolerateEmpty` 1 a
request without the file is accepted: the checkpoint's place receives the plan's fresh state", so 0
reads as "refuse a request without --checkpoint".  No host reads the field (runtime_c has it only in
plan_steps.h's struct; the reference and the simulator never look at it): a ridge-regression plan whose
velocity chunk was read with tolerateEmpty 0 was certified, and `bobc run --reference` without
--checkpoint trained from the fresh state, exit 0, the same bytes as with 1.  The expected verdicts come
from that sentence and from what every host does (the fresh state whatever the field), not from bobc's
own output: only 1 says what happens.
"""
from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from bobc.certify.host_steps import check_host_steps

REPO = Path(__file__).resolve().parents[2]
LINREG = REPO / "examples/linear_regression/LinReg/Build/NativeHost.bob"


@pytest.fixture(scope="module")
def linreg():
    from bobc import pipeline
    from bobc.targets import SM86

    return pipeline.extract(pipeline.load(LINREG, SM86), None)


def _with(plan, file: str, value: int):
    steps = list(plan.host.steps)
    index = next(i for i, step in enumerate(steps) if step.kind.name == "read" and step.file == file)
    steps[index] = dataclasses.replace(steps[index], tolerate_empty=value)
    return dataclasses.replace(plan, host=dataclasses.replace(plan.host, steps=tuple(steps))), index


def _said(plan) -> list[str]:
    return [f.message for f in check_host_steps(plan) if "tolerateEmpty" in f.message]


@pytest.mark.parametrize("value", [0, 2, 2 ** 32 - 1])
def test_a_checkpoint_read_that_would_refuse_a_fresh_request_is_refused(linreg, value):
    plan, index = _with(linreg, "checkpoint-in", value)
    said = _said(plan)
    assert len(said) == 1, said
    assert said[0].startswith(f"the host's step {index} (read) reads its input checkpoint with tolerateEmpty {value:,}")
    assert said[0].endswith("write 1")


def test_linreg_as_shipped_and_an_input_read_are_not_refused(linreg):
    # LinReg's checkpoint read says 1; its input read says 0 (a request without --input is a usage error)
    assert _said(linreg) == []
    plan, _ = _with(linreg, "input", 1)
    assert _said(plan) == []
