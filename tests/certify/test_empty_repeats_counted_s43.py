"""A repeat whose body unrolls to no step counts one step an iteration against the host's
unrolled-step limit (docs/limits.md, HOST_STEP_COUNT; probe s43 scale): such a repeat counted 0
steps, so `Repeat 65536 (Repeat 65536 (Repeat 0 (WriteAt ...)))` passed the limit and the
certifier's walks of the unrolled schedule (and the build's bobc.plan.schedule.unroll), which
iterate every repeat's count, ran `bobc check` for hours (4.3e9 iterations)."""
from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from bobc.certify.limits import HOST_STEP_COUNT, check_limits
from bobc.plan.host import make_step
from bobc.targets import SM86

REPO = Path(__file__).resolve().parents[2]
LINREG = REPO / "examples/linear_regression/LinReg/Build/NativeHost.bob"


@pytest.fixture(scope="module")
def linreg():
    from bobc import pipeline

    return pipeline.extract(pipeline.load(LINREG, SM86), None)


def _with_repeats(plan, outer: int, inner: int):
    """LinReg's schedule with Repeat outer (Repeat inner (Repeat 0 (its first step))) before it."""
    steps = plan.host.steps
    nothing = make_step("repeat", count=0, body=(steps[0],), at=None)
    nested = make_step("repeat", count=outer,
                       body=(make_step("repeat", count=inner, body=(nothing,), at=None),), at=None)
    return dataclasses.replace(plan, host=dataclasses.replace(plan.host, steps=(nested, *steps)))


def _limit_messages(plan) -> list[str]:
    return [f.message for f in check_limits(plan, SM86) if "steps once repeats are unrolled" in f.message]


def test_nested_repeats_of_nothing_are_refused_by_the_step_limit(linreg):
    # 65,536 x 65,536 iterations, one step each by the rule: 2^32 > 2^20 (the count stops there)
    said = _limit_messages(_with_repeats(linreg, 1 << 16, 1 << 16))
    assert len(said) == 1, said
    assert "4,294,967,296" in said[0] and "1,048,576" in said[0] and "docs/limits.md" in said[0]


def test_a_repeat_of_nothing_within_the_limit_is_not(linreg):
    # 1,024 x 1,000 iterations: 1,024,000 plus LinReg's handful of steps, below 2^20 = 1,048,576
    assert 1024 * 1000 + len(linreg.host.steps) + 10 < HOST_STEP_COUNT
    assert not _limit_messages(_with_repeats(linreg, 1024, 1000))
