"""The certifier holds a plan's checkpoint to what its host can read back: the whole file (the
envelope's header and identities, the payload, the CRC and trailer) within the 1 GiB a host reads
(docs/limits.md; probe s29 coppelius finding 1: a payload under 1 GiB whose file is over it trained
once and could never resume)."""
from __future__ import annotations

import dataclasses

from bobc.certify.limits import CHECKPOINT_FILE_BYTES, check_limits, checkpoint_file_bytes, checkpoint_file_finding
from bobc.plan.model import CheckpointContract
from bobc.reference import envelope


def contract(payload: int) -> CheckpointContract:
    return CheckpointContract(b"schema-v1", b"learner-v1", b"data-v1", b"seed-v1", payload, 1 << 20, 1)


def test_the_file_is_the_envelope_the_reference_writes():
    small = contract(4096 + 16)
    data = envelope.encode(dataclasses.replace(small, chunk_bytes=16), 0, bytes(small.payload_bytes))
    assert checkpoint_file_bytes(small) == len(data)


def test_a_payload_under_the_limit_whose_file_is_over_it_is_refused():
    at_limit = contract(CHECKPOINT_FILE_BYTES - checkpoint_file_bytes(contract(0)))
    assert checkpoint_file_bytes(at_limit) == CHECKPOINT_FILE_BYTES
    assert checkpoint_file_finding(at_limit) is None
    over = dataclasses.replace(at_limit, payload_bytes=at_limit.payload_bytes + 16)
    finding = checkpoint_file_finding(over)
    assert finding is not None and finding.kind == "limit"
    assert f"{checkpoint_file_bytes(over):,} bytes" in finding.message
    assert "1,073,741,824 bytes a host reads" in finding.message and "docs/limits.md" in finding.message


def test_check_limits_refuses_such_a_plan():
    from tests.images.synthetic_bob import bob_plan
    from bobc.targets import SM86

    plan = bob_plan()
    near = contract(CHECKPOINT_FILE_BYTES - 16)            # the payload alone is within 1 GiB
    messages = [f.message for f in check_limits(dataclasses.replace(plan, checkpoint=near), SM86)]
    assert any("the checkpoint's file is" in m for m in messages), messages
    fine = contract(1 << 20)
    messages = [f.message for f in check_limits(dataclasses.replace(plan, checkpoint=fine), SM86)]
    assert not any("the checkpoint's file" in m for m in messages), messages


def test_the_envelopes_size_rule_is_the_envelopes_own(monkeypatch):
    """The certifier's size of a checkpoint file is bobc.reference.envelope's, not a second copy of
    its header and tail sizes (probe s38 onetable finding 4): a change of the format's fixed
    header moves both."""
    from bobc.reference import envelope

    small = contract(100)
    before = checkpoint_file_bytes(small)
    assert before == len(envelope.encode(small, 0, bytes(100)))
    monkeypatch.setattr(envelope, "FIXED", envelope.FIXED + 64)
    assert checkpoint_file_bytes(small) == before + 64 == envelope.file_bytes(small)
