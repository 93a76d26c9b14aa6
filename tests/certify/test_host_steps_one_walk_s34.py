"""The host-step checks that look at each step on its own (check_host_steps's "lies in no buffer"
and check_host_writes's "writes the machine's buffers") walk the schedule with one walker,
host_steps._every_step: every step but a Repeat, each once, in the schedule's order, a repeat's
body where the Repeat stands whatever its count, named alike by both checks."""
from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from bobc import pipeline
from bobc.certify.host_steps import _every_step, check_host_steps, check_host_writes
from bobc.plan.host import make_step
from bobc.targets import SM86

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def plan():
    program = pipeline.load(REPO / "examples/linear_regression/LinReg/Build/NativeHost.bob", SM86)
    return pipeline.extract(program, None)


def _fill(address: int):
    return make_step("fill", host=address, payload=bytes(4), at=None)


def _schedule(plan):
    """A Fill into the QMD buffer inside a Repeat of count 0, and a Fill of bytes no buffer holds
    inside a Repeat nested in it, between two Operations."""
    qmd = next(b for b in plan.host.buffers if b.name == "qmd")
    lowest = min(b.gpu for b in plan.host.buffers)
    assert lowest >= 8
    inner = make_step("repeat", count=3, body=(_fill(lowest - 8),), at=None)
    outer = make_step("repeat", count=0, body=(_fill(qmd.gpu), inner), at=None)
    operation = make_step("operation", at=None)
    return (operation, outer, operation), qmd, lowest - 8


def test_the_walk_names_every_step_in_order_whatever_a_repeats_count(plan):
    steps, _, _ = _schedule(plan)
    assert [(name, step.kind.name) for name, step in _every_step(steps)] == [
        ("step 0 (operation)", "operation"),
        ("step 1 (repeat)'s body: step 0 (fill)", "fill"),
        ("step 1 (repeat)'s body: step 1 (repeat)'s body: step 0 (fill)", "fill"),
        ("step 2 (operation)", "operation")]


def test_both_checks_name_a_step_in_a_repeat_as_the_walk_does(plan):
    steps, qmd, nowhere = _schedule(plan)
    changed = dataclasses.replace(plan, host=dataclasses.replace(plan.host, steps=steps))
    names = [name for name, _ in _every_step(steps)]
    writes = [f.message for f in check_host_writes(changed)]
    assert writes == [f"the host's {names[1]} writes [{qmd.gpu:#x}, {qmd.gpu + 4:#x}) (4 bytes) into host buffer "
                      f"qmd [{qmd.gpu:#x}, {qmd.gpu + qmd.extent:#x}), which holds the launches' QMDs: the GPU "
                      f"would run words the certifier never checked"]
    outside = [f.message for f in check_host_steps(changed) if " touches " in f.message]
    assert len(outside) == 1
    assert outside[0].startswith(f"the host's {names[2]} touches [{nowhere:#x}, {nowhere + 4:#x}) (4 bytes), "
                                 f"which lies in no buffer the plan maps; the nearest buffer is ")
