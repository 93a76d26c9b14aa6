"""A plan host's schedule nesting repeats one in another's body more than 64 deep is refused by
name, at the repeat (docs/limits.md; probe s43 scale): 8,000 levels ended `bobc check` with a
3,000-line RecursionError traceback (the certifier's walks recurse a few frames a level), and
under `ulimit -v` with a SIGSEGV.  The bound is the native hosts' own (runtime_c/native_program.h
NP_MAX_REPEAT_NESTING, read here from the header: the independent figure)."""
from __future__ import annotations

import dataclasses
import re
from pathlib import Path

import pytest

from bobc.certify.limits import check_limits
from bobc.plan.host import make_step
from bobc.targets import SM86

REPO = Path(__file__).resolve().parents[2]
LINREG = REPO / "examples/linear_regression/LinReg/Build/NativeHost.bob"
NESTING = int(re.search(r"#define NP_MAX_REPEAT_NESTING (\d+)u",
                        (REPO / "runtime_c/native_program.h").read_text()).group(1))


@pytest.fixture(scope="module")
def linreg():
    from bobc import pipeline

    return pipeline.extract(pipeline.load(LINREG, SM86), None)


def _nested(plan, depth: int):
    steps = plan.host.steps
    write = next(s for s in steps if s.kind.name in ("write", "write_at"))
    body = (write,)
    for level in range(depth):
        body = (make_step("repeat", count=1, body=body, at=("nested", level)),)
    return dataclasses.replace(plan, host=dataclasses.replace(plan.host, steps=(*body, *steps)))


def _nesting(plan) -> list:
    return [f for f in check_limits(plan, SM86) if "nests repeats" in f.message]


def test_one_level_past_the_bound_is_refused_at_the_repeat(linreg):
    said = _nesting(_nested(linreg, NESTING + 1))
    assert len(said) == 1, [f.message for f in said]
    assert f"more than {NESTING} deep" in said[0].message and "docs/limits.md" in said[0].message
    assert said[0].at == ("nested", 0)      # the innermost repeat, the one past the bound


def test_the_bound_itself_is_not(linreg):
    assert not _nesting(_nested(linreg, NESTING))
