"""Probe s43 nativemsgs: on a resumed run a read at the cursor past the input record was refused
(exit 3) with `a read at the cursor: N bytes at OFFSET of a SIZE-byte input`: nothing said that the
cursor starts at the input checkpoint's step x scale + base, so a run resumed with a shorter input
(or a later checkpoint than the input was made for) read as a plan mistake.  The C plan host
(runtime_c/plan_host.c read_input, bobc_cursor_note: its words held in runtime_c's own test),
`bobc run --reference` and `bobc sim` now add where the cursor started and what to do.

Expected text by hand: the cursor starts at step x scale + base; the plan's CursorFromCheckpoint
gives scale and base, the checkpoint its step."""
from __future__ import annotations

import dataclasses

import pytest

from bobc.errors import BobcError
from bobc.reference import envelope
from bobc.reference.host import ReferenceHost, fresh_payload
from bobc.sim.invocation import simulate

STEP = 20


def note(step, scale, base) -> str:
    return (f" (the cursor started at byte {step * scale + base}: the input checkpoint's step {step} x {scale} + "
            f"{base}; resume from an earlier checkpoint, or give an input that holds what a run from step {step} "
            f"reads)")


def test_a_resumed_runs_cursor_read_past_the_record_names_the_checkpoint_step(all_steps, kernels, case):
    built, host = all_steps
    record = case[0]
    plan = built.plan
    cursor = next(s for s in plan.host.steps if s.kind.name == "cursor_from_checkpoint")
    payload = fresh_payload(plan)
    # a read at the cursor whose delta puts it past the record, whatever the cursor's start
    delta = len(record)

    def first(steps, change):
        out, found = [], False
        for s in steps:
            name = s.kind if isinstance(s.kind, str) else s.kind.name
            if name == "read_at_cursor" and not found:
                s, found = change(s), True
            out.append(s)
        assert found
        return tuple(out)

    ref_plan = dataclasses.replace(plan, host=dataclasses.replace(
        plan.host, steps=first(plan.host.steps, lambda s: dataclasses.replace(s, delta=delta))))
    with pytest.raises(BobcError) as referenced:
        ReferenceHost(ref_plan, kernels).run("train", record, (payload, STEP), record_path="rec.bin")
    sim_host = dataclasses.replace(host, steps=first(host.steps, lambda s: dataclasses.replace(
        s, values={**s.values, "delta": delta})))
    ck = envelope.encode(plan.checkpoint, STEP, payload)
    with pytest.raises(BobcError) as simulated:
        simulate(sim_host, built.images, "train", record, checkpoint=ck)
    expected_note = note(STEP, cursor.scale, cursor.base)
    assert referenced.value.exit_code == simulated.value.exit_code == 3
    assert referenced.value.message.endswith(expected_note), referenced.value.message
    assert simulated.value.message.endswith(expected_note), simulated.value.message
    assert referenced.value.message == simulated.value.message
