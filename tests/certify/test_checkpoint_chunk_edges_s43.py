"""A checkpoint's payload is whole chunks, and its identities fit the envelope's 65,536-byte
bound (session 43 mutants9 of certify/limits.py: the whole-chunks check dropped and the identity
bound one more each survived the certify tests).  Hand arithmetic: 1 MiB + 16 bytes is not a whole
number of 1 MiB chunks; docs/limits.md gives an identity at most 65,536 bytes."""
from __future__ import annotations

import dataclasses

from bobc.certify.limits import check_limits
from bobc.plan.model import CheckpointContract
from bobc.targets import SM86


def messages(checkpoint):
    from tests.images.synthetic_bob import bob_plan

    return [f.message for f in check_limits(dataclasses.replace(bob_plan(), checkpoint=checkpoint), SM86)]


def contract(payload, chunk=1 << 20, schema=b"schema-v1"):
    return CheckpointContract(schema, b"learner-v1", b"data-v1", b"seed-v1", payload, chunk, 1)


def test_a_payload_of_whole_chunks_is_accepted_and_a_part_chunk_refused():
    assert not any("chunk" in m for m in messages(contract(2 << 20)))
    said = messages(contract((1 << 20) + 16))
    assert any("payload (1,048,592 bytes) is not a whole number of 1,048,576-byte chunks" in m for m in said), said


def test_an_identity_of_65536_bytes_is_accepted_and_one_more_refused():
    assert not any("identity" in m for m in messages(contract(1 << 20, schema=b"s" * 65536)))
    said = messages(contract(1 << 20, schema=b"s" * 65537))
    assert any("the checkpoint's schema identity is 65,537 bytes" in m for m in said), said
