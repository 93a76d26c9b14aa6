"""The pointer check finds each launch's host fills by one pass over the plan's fills, not one
pass per launch (probe s43 scale: launches x fills, 7 s of `bobc check` in a LinReg of 4,000
updates with one fill per update; a plan near the 65,536-launch bound with a fill per launch
would take hours).  Counted, not timed: the fills are read the same number of times whatever
the number of launches (tests/certify's fill tests hold that each launch still gets its own)."""
from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from bobc.certify.pointers import check_pointers
from bobc.targets import SM86

REPO = Path(__file__).resolve().parents[2]
LINREG = REPO / "examples/linear_regression/LinReg/Build/NativeHost.bob"


class CountedFills(tuple):
    """A fills tuple that counts the passes over it."""
    passes = 0

    def __iter__(self):
        CountedFills.passes += 1
        return super().__iter__()


@pytest.fixture(scope="module")
def linreg():
    from bobc import pipeline
    from bobc.certify import kernel_contracts

    plan = pipeline.extract(pipeline.load(LINREG, SM86), None)
    contracts, _ = kernel_contracts(plan, SM86, ())
    return plan, contracts


def test_fills_are_read_once_whatever_the_launches(linreg):
    plan, contracts = linreg
    launches = len(plan.program.launches)
    assert launches > 10            # LinReg's 42: a pass per launch would be 42 passes
    CountedFills.passes = 0
    fills = CountedFills()
    check_pointers(dataclasses.replace(plan, host=dataclasses.replace(plan.host, fills=fills)), contracts)
    assert CountedFills.passes <= 2, CountedFills.passes
