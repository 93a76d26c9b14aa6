"""A read of the input past its record is refused by the simulator and the reference runner
alike, in runtime_c/plan_host.c's words and with its exit code (probe s28 newmodel2 finding
2): a read at the cursor's is bad input (exit 3, read_input), a Read's is the schedule's own
fault (exit 1, step_read; the certifier refuses one of the input record).  The reference
runner said "input record PATH: the schedule reads ..." (exit 3) for both, the simulator
"input record input: a read at the cursor: ..." for the first."""
from __future__ import annotations

import dataclasses

import pytest

from bobc.errors import BobcError
from bobc.reference.host import ReferenceHost
from bobc.sim.invocation import simulate


def both(built, host, kernels, record, kind, **values):
    """The refusals of the simulator and the reference runner with the first `kind` step's `values`."""
    def first(steps, change):
        found = False
        out = []
        for s in steps:
            name = s.kind if isinstance(s.kind, str) else s.kind.name
            if name == kind and not found:
                s, found = change(s), True
            out.append(s)
        assert found
        return tuple(out)

    sim_steps = first(host.steps, lambda s: dataclasses.replace(s, values={**s.values, **values}))
    with pytest.raises(BobcError) as simulated:
        simulate(dataclasses.replace(host, steps=sim_steps), built.images, "train", record)
    plan = built.plan
    ref_steps = first(plan.host.steps, lambda s: dataclasses.replace(s, **values))
    ref_plan = dataclasses.replace(plan, host=dataclasses.replace(plan.host, steps=ref_steps))
    with pytest.raises(BobcError) as referenced:
        ReferenceHost(ref_plan, kernels).run("train", record, None, record_path="rec.bin")
    return simulated.value, referenced.value


def test_a_read_at_the_cursor_past_the_record_is_bad_input_in_the_hosts_words(all_steps, kernels, case):
    built, host = all_steps
    record = case[0]
    simulated, referenced = both(built, host, kernels, record, "read_at_cursor", delta=len(record))
    assert simulated.exit_code == referenced.exit_code == 3
    assert simulated.message == referenced.message
    assert simulated.message.startswith("a read at the cursor: 4 bytes at ")
    assert simulated.message.endswith(f" of a {len(record)}-byte input")


def test_a_read_past_the_record_is_the_schedules_fault_in_the_hosts_words(all_steps, kernels, case):
    built, host = all_steps
    record = case[0]
    read = next(s for s in built.plan.host.steps if s.kind.name == "read" and s.file == "input")
    simulated, referenced = both(built, host, kernels, record, "read", offset=read.offset + len(record))
    assert simulated.exit_code == referenced.exit_code == 1
    assert simulated.message == referenced.message == (
        f"the schedule reads {read.extent} bytes at {read.offset + len(record)} of a {len(record)}-byte input")


def test_one_byte_past_the_record_is_counted_in_the_singular_by_both(all_steps, kernels, case):
    """At extent 1 the simulator says "1 byte" as the reference runner and plan_host.c do (it
    had its own copy of the words, which said "1 bytes")."""
    built, host = all_steps
    record = case[0]
    simulated, referenced = both(built, host, kernels, record, "read_at_cursor", delta=len(record), extent=1)
    assert simulated.message == referenced.message
    assert simulated.message.startswith("a read at the cursor: 1 byte at ")
    read = next(s for s in built.plan.host.steps if s.kind.name == "read" and s.file == "input")
    simulated, referenced = both(built, host, kernels, record, "read", offset=read.offset + len(record), extent=1)
    assert simulated.message == referenced.message == (
        f"the schedule reads 1 byte at {read.offset + len(record)} of a {len(record)}-byte input")
