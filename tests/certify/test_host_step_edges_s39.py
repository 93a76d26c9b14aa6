"""The host-step rules at their exact edges, on LinReg's schedule (probe s39 mutants2: each bound
below, moved by one, went through the host-step tests).

Rules from docs/host-steps.md and bobc.certify.host_steps: every byte a step touches lies in one
buffer the plan maps (plan.host_buffers, [start, end): a write ending at the arena's end fits, one byte more does not);
the reads of the input checkpoint cover its payload, and no more (LinReg's payload is 32 bytes); the
request's last publication states the contract's updates per invocation (20), no earlier one states
more, and none fewer than the one before it."""
from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from bobc import pipeline
from bobc.certify.host_steps import check_host_steps
from bobc.targets import SM86

REPO = Path(__file__).resolve().parents[2]
LINREG = REPO / "examples/linear_regression/LinReg/Build/NativeHost.bob"


@pytest.fixture(scope="module")
def plan():
    return pipeline.extract(pipeline.load(LINREG, SM86), None)


def with_steps(plan, steps):
    return dataclasses.replace(plan, host=dataclasses.replace(plan.host, steps=tuple(steps)))


def replaced(plan, index, **values):
    steps = list(plan.host.steps)
    steps[index] = dataclasses.replace(steps[index], **values)
    return with_steps(plan, steps)


def messages(plan):
    return [f.message for f in check_host_steps(plan)]


def test_linregs_schedule_is_as_these_tests_take_it(plan):
    steps = plan.host.steps
    assert (steps[1].kind.name, steps[1].file, steps[1].extent) == ("read", "checkpoint-in", 32)
    assert (steps[3].kind.name, steps[3].file) == ("write", "predictions")
    assert [s.kind.name for s in steps[10:]] == ["checkpoint_begin", "write", "checkpoint_publish"]
    assert plan.checkpoint.payload_bytes == 32 and plan.checkpoint.updates_per_invocation == 20
    assert messages(plan) == []


def test_a_write_to_the_arenas_last_byte_fits_and_one_more_does_not(plan):
    # the host buffer the plan maps for its arena (plan.host_buffers), not the arena window inside it
    (arena,) = [b for b in plan.host_buffers if b.name == "arena"]
    end = arena.gpu_address + arena.size
    host = plan.host.steps[3].host
    assert not [m for m in messages(replaced(plan, 3, extent=end - host)) if "lies in no buffer" in m]
    past = messages(replaced(plan, 3, extent=end - host + 1))
    assert any(m.startswith("the host's step 3 (write) touches") and "lies in no buffer" in m for m in past), past


def test_the_input_checkpoint_read_one_byte_short_or_long_is_refused(plan):
    short = messages(replaced(plan, 1, extent=31))
    assert any("leave bytes [31, 32)" in m for m in short), short
    long = messages(replaced(plan, 1, extent=33))
    assert any("reads bytes [0, 33) of its input" in m for m in long), long


def test_an_earlier_publication_of_more_updates_than_the_last_and_the_contract_is_refused(plan):
    steps = list(plan.host.steps)
    begin, write, publish = steps[10:]
    schedule = steps[:10] + [begin, write, dataclasses.replace(publish, updates=21), begin, write, publish]
    found = messages(with_steps(plan, schedule))
    assert any("publishes the checkpoint at the input's step + 21, more than the contract's 20" in m
               for m in found), found
    assert any("step + 20, fewer updates than the publication before it states (21)" in m for m in found), found
