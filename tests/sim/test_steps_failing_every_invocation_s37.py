"""Probe s37 stepfuzz findings 2 and 3: a step whose operands alone make the host stop (exit 1,
runtime_c/plan_host.c) whenever it is reached -- a cyclic read over zero records, a stamp past the
stamp table or of no submission, a stat past the 4 KiB stat block, a Close of a file that is not
the predictions or the result, a write of an input, a read of an output, a read at the cursor of
anything but the input -- was certified, so `bobc run --reference` ran it (to a ZeroDivisionError,
or to exit 0 with the bytes dropped or the outputs grown) where the host and `bobc sim` stop.  The
certifier refuses each at the step; the simulator (plan_host.c's checks, step by step) is the
witness that the host would stop there."""
from __future__ import annotations

import dataclasses

import pytest

from bobc.certify.host_steps import check_host_steps
from bobc.plan.host import make_step
from bobc.sim.faults import HostStepFault
from bobc.sim.host_adapter import host_plan
from bobc.sim.invocation import simulate
from bobc.targets import SM86



def scratch(plan) -> int:
    """The AllSteps plan's staging bytes (the arena's spare bytes its Fill writes)."""
    return next(s.host for s in plan.host.steps if s.kind.name == "fill")


CASES = {
    "cyclic read over zero records": (lambda a: make_step("read_cyclic", host=a, extent=1, offset=0, record_bytes=1,
                                                          count=0, index=0, index_stride=0),
                                      "a cyclic read over zero records"),
    "stamp past the table": (lambda a: make_step("stamp", gp_put=0, stride=0, which=4096), "stamps slot 4,096"),
    "stamp of no submission": (lambda a: make_step("stamp", gp_put=33, stride=0, which=0),
                               "timestamp of submission 33, but the plan has 33"),
    "stat past the block": (lambda a: make_step("record_stat", host=a, stat_offset=4094, extent=4),
                            "bytes [4,094, 4,098) of the stat block, which holds 4,096"),
    "close of the checkpoint": (lambda a: make_step("close", file="checkpoint-out"), "closes checkpoint-out"),
    "close of the input": (lambda a: make_step("close", file="input"), "closes input"),
    "write of the input": (lambda a: make_step("write", file="input", host=a, extent=4), "writes input, an input"),
    "write_at of the checkpoint": (lambda a: make_step("write_at", file="checkpoint-in", host=a, extent=4, offset=0),
                                   "writes checkpoint-in, an input"),
    "status to the input": (lambda a: make_step("write_status", file="input"), "writes input, an input"),
    "stat to the checkpoint": (lambda a: make_step("write_stat", file="checkpoint-in"),
                               "writes checkpoint-in, an input"),
    "timestamps to the input": (lambda a: make_step("write_timestamps", file="input"), "writes input, an input"),
    "read of an output": (lambda a: make_step("read", file="predictions", host=a, extent=4, offset=0, stride=0,
                                              tolerate_empty=0), "reads predictions, an output"),
    "cursor read of the checkpoint": (lambda a: make_step("read_at_cursor", file="checkpoint-in", host=a, extent=4,
                                                          delta=0), "reads checkpoint-in, not the input"),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_a_step_that_fails_every_invocation_is_refused_at_the_step(all_steps, case, name):
    built, _ = all_steps
    make, words = CASES[name]
    step = make(scratch(built.plan))
    plan = dataclasses.replace(built.plan, host=dataclasses.replace(built.plan.host, steps=(step,)))
    # the witness: plan_host.c's checks, as the simulator carries them out, stop the request here
    with pytest.raises(HostStepFault) as caught:
        simulate(host_plan(plan, built.images, SM86, built.program.search_path), built.images, "train", case[0])
    assert caught.value.exit_code == 1
    findings = [f for f in check_host_steps(plan) if f.message.startswith("the host's step 0 ")]
    assert len(findings) == 1, [f.message for f in check_host_steps(plan)]
    assert words in findings[0].message and "exit 1" in findings[0].message


def test_a_stamp_in_a_repeat_is_judged_at_its_last_iteration(all_steps):
    built, _ = all_steps
    stamp = make_step("stamp", gp_put=30, stride=1, which=0)
    for count, refused in ((3, False), (4, True), (0, False)):
        steps = (make_step("repeat", count=count, body=(stamp,)),)
        plan = dataclasses.replace(built.plan, host=dataclasses.replace(built.plan.host, steps=steps))
        said = [f.message for f in check_host_steps(plan) if "timestamp of submission" in f.message]
        assert bool(said) == refused, (count, said)
        if refused:
            assert "submission 33 (at its last iteration)" in said[0]


# probe s37 stepfuzz finding 4: docs/host-steps.md's Close -- "the predictions or the result are
# finished: no step writes them again" -- was held by nothing: the bytes written after it were
# published by all three hosts
@pytest.mark.parametrize("write", ["write", "write_at", "write_stat", "write_status", "write_timestamps",
                                   "write_input_identity"])
def test_a_write_after_the_close_of_its_file_is_refused(all_steps, write):
    built, _ = all_steps
    address = scratch(built.plan)
    fields = {"write": dict(host=address, extent=4), "write_at": dict(host=address, extent=4, offset=0)}.get(write, {})
    after = make_step(write, **fields) if write == "write_input_identity" else \
        make_step(write, file="result", **fields)
    steps = (make_step("close", file="result"), make_step("sync", file="result"), after)
    plan = dataclasses.replace(built.plan, host=dataclasses.replace(built.plan.host, steps=steps))
    said = [f.message for f in check_host_steps(plan) if "closed it" in f.message]
    assert said == [f"the host's step 2 ({write}) writes result after step 0 (close) closed it: a closed output is "
                    "finished and no step writes it again; move the Close after the file's last write"]
    # the other output is still open
    other = make_step("write", file="predictions", host=address, extent=4)
    plan = dataclasses.replace(built.plan, host=dataclasses.replace(built.plan.host, steps=steps[:2] + (other,)))
    assert not [f for f in check_host_steps(plan) if "closed it" in f.message]


@pytest.mark.parametrize("count, refused", [(0, False), (1, False), (2, True)])
def test_a_write_before_a_close_in_a_repeated_body_is_a_write_after_it(all_steps, count, refused):
    built, _ = all_steps
    body = (make_step("write", file="predictions", host=scratch(built.plan), extent=4),
            make_step("close", file="predictions"))
    plan = dataclasses.replace(built.plan, host=dataclasses.replace(
        built.plan.host, steps=(make_step("repeat", count=count, body=body),)))
    said = [f.message for f in check_host_steps(plan) if "closed it" in f.message]
    assert said == ([] if not refused else [
        "the host's step 0's body: step 0 (write) writes predictions after step 0's body: step 1 (close) closed "
        "it: a closed output is finished and no step writes it again; move the Close after the file's last write"])
