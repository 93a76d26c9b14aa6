"""A Read of the input checkpoint with tolerateEmpty other than 0 or 1 is refused at the step (probe s44
newuser9, finding 4; session 44 tolerate).

specs/Platform/Linux/Nvidia/PlanHost.bob says of NvidiaPlanHostStepRead: "With `tolerateEmpty` 1 a
request without the file is accepted: the checkpoint's place receives the plan's fresh state", so 0
reads as "refuse a request without --checkpoint", which every host now does (exit 2:
tests/host/test_checkpoint_required_s44.py); the field is a flag, so 2 or 2^32 - 1 says neither and
was once taken as 1 by every host.  The expected verdicts come from that sentence (two meanings, 0 and
1), not from bobc's own output.
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


@pytest.mark.parametrize("value", [2, 2 ** 32 - 1])
def test_a_checkpoint_read_whose_flag_is_neither_0_nor_1_is_refused(linreg, value):
    plan, index = _with(linreg, "checkpoint-in", value)
    said = _said(plan)
    assert len(said) == 1, said
    assert said[0].startswith(f"the host's step {index} (read) reads its input checkpoint with tolerateEmpty {value:,}")
    assert said[0].endswith("write 0 or 1")


def test_a_checkpoint_read_that_refuses_a_fresh_request_is_certified(linreg):
    # 0: the hosts refuse a request without --checkpoint (the spec's other meaning of the flag)
    plan, _ = _with(linreg, "checkpoint-in", 0)
    assert _said(plan) == []


def test_linreg_as_shipped_and_an_input_read_are_not_refused(linreg):
    # LinReg's checkpoint read says 1; its input read says 0 (a request without --input is a usage error)
    assert _said(linreg) == []
    plan, _ = _with(linreg, "input", 1)
    assert _said(plan) == []
