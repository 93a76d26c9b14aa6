"""The certifier holds the host's reads of the input to the request layout's record, and the
request's last checkpoint publication to the contract's updates per invocation (probe s28
newmodel2 findings 2 and 4): a Read 4 bytes longer than LinReg's 2,064-byte record, and a
CheckpointPublish stating 7 updates where the contract makes 20, were certified and failed
(or lied about the step) at every run."""
from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from bobc import pipeline
from bobc.certify import CertificationError, certify
from bobc.certify.host_steps import check_host_steps
from bobc.plan.host import make_step
from bobc.targets import SM86

REPO = Path(__file__).resolve().parents[2]
LINREG = REPO / "examples/linear_regression/LinReg/Build/NativeHost.bob"


@pytest.fixture(scope="module")
def linreg():
    program = pipeline.load(LINREG, SM86)
    plan = pipeline.extract(program, None)
    return plan, getattr(program, "search_path", ())


def with_steps(plan, steps):
    return dataclasses.replace(plan, host=dataclasses.replace(plan.host, steps=tuple(steps)))


def replaced(plan, index, **values):
    steps = list(plan.host.steps)
    steps[index] = dataclasses.replace(steps[index], **values)
    return with_steps(plan, steps)


def messages(plan):
    return [f.message for f in check_host_steps(plan)]


def test_linregs_schedule_reads_its_record_and_publishes_its_updates(linreg):
    plan, _ = linreg
    assert plan.host.request.input_record_bytes == 2064 and plan.checkpoint.updates_per_invocation == 20
    assert messages(plan) == []


def test_a_read_past_the_input_record_is_refused_naming_the_step_and_both_sizes(linreg):
    plan, folders = linreg
    assert plan.host.steps[0].kind.name == "read" and plan.host.steps[0].file == "input"
    longer = replaced(plan, 0, extent=plan.host.steps[0].extent + 4)
    with pytest.raises(CertificationError) as caught:
        certify(longer, SM86, folders=folders)
    assert [f.message for f in caught.value.findings if f.kind == "host-step"] == [
        "the host's step 0 (read) reads bytes [0, 2,068) of its input, but the request layout's input record is "
        "2,064 bytes: no record the host accepts holds them, so every invocation would fail; read inside the "
        "record (offset + extent <= 2,064)"]


def test_cyclic_cursor_and_identity_reads_past_the_record_are_refused(linreg):
    plan, _ = linreg
    record = plan.host.request.input_record_bytes
    steps = [make_step("read_cyclic", host=plan.host.steps[0].host, extent=16, offset=0, record_bytes=record // 4,
                       count=5, index=0, index_stride=1),
             make_step("read_at_cursor", file="input", host=plan.host.steps[0].host, extent=record + 1, delta=0),
             make_step("bind_input_identity", offset=record - 4, extent=8)]
    found = messages(with_steps(plan, [make_step("repeat", count=5, body=(steps[0],)), *steps[1:],
                                       *plan.host.steps]))
    assert any(m.startswith("the host's step 0's body: step 0 (read_cyclic) reads (record 4 of 5) bytes "
                            f"[{4 * record // 4:,}, ") for m in found), found
    assert any(m.startswith(f"the host's step 1 (read_at_cursor) reads (wherever its cursor is) bytes [0, "
                            f"{record + 1:,})") for m in found), found
    assert any(m.startswith(f"the host's step 2 (bind_input_identity) reads (as its identity) bytes "
                            f"[{record - 4:,}, {record + 4:,})") for m in found), found
    # the same cyclic read over fewer iterations visits only the records inside
    inside = messages(with_steps(plan, [make_step("repeat", count=4, body=(steps[0],)), *plan.host.steps]))
    assert inside == []


def test_a_publication_stating_other_updates_than_the_contract_is_refused_with_both(linreg):
    plan, folders = linreg
    index = next(i for i, s in enumerate(plan.host.steps) if s.kind.name == "checkpoint_publish")
    seven = replaced(plan, index, updates=7)
    with pytest.raises(CertificationError) as caught:
        certify(seven, SM86, folders=folders)
    assert [f.message for f in caught.value.findings if f.kind == "host-step"] == [
        f"the host's step {index} (checkpoint_publish), the request's last publication, publishes the checkpoint "
        "at the input's step + 7, but the checkpoint contract makes 20 updates per invocation: its step would not "
        "count the updates made; state 20 (or make the contract's updates per invocation the schedule's)"]


def test_earlier_publications_count_up_to_the_last(linreg):
    plan, _ = linreg
    index = next(i for i, s in enumerate(plan.host.steps) if s.kind.name == "checkpoint_publish")
    steps = list(plan.host.steps)
    begin, write = steps[index - 2], steps[index - 1]
    assert (begin.kind.name, write.kind.name) in {("begin_checkpoint", "write"), ("checkpoint_begin", "write")}
    ok = [*steps[:index - 2], begin, write, dataclasses.replace(steps[index], updates=10), *steps[index - 2:]]
    assert messages(with_steps(plan, ok)) == []
    late = [*steps[:index - 2], begin, write, dataclasses.replace(steps[index], updates=30), *steps[index - 2:]]
    assert messages(with_steps(plan, late)) == [
        f"the host's step {index + 3} (checkpoint_publish) publishes the checkpoint at the input's step + 20, fewer "
        "updates than the publication before it states (30): a later publication holds later state",
        f"the host's step {index} (checkpoint_publish) publishes the checkpoint at the input's step + 30, more than "
        "the contract's 20 updates per invocation"]
