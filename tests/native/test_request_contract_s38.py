"""A native request carries the checkpoint envelope's contract as the plan's own type (probe s38
onetable finding 3): bobc.native.request.Request declared schema, learner, data, seed,
payload_bytes, chunk_bytes and updates_per_invocation again beside bobc.plan.model's
CheckpointContract, and the envelope took "anything with its fields".  Now the request holds a
CheckpointContract, and an envelope written for the plan's contract is the request's."""
from __future__ import annotations

import dataclasses

from bobc.native.request import Request, parse_request
from bobc.plan.model import CheckpointContract
from bobc.reference import envelope

from .test_native_bounds_s34 import request


def test_a_request_declares_no_field_of_the_contract_again():
    contract_fields = {f.name for f in dataclasses.fields(CheckpointContract)}
    assert not contract_fields & {f.name for f in dataclasses.fields(Request)}


def test_a_requests_contract_reads_the_plans_envelope():
    parsed = parse_request(request(48, 16))
    assert parsed.contract == CheckpointContract(b"a", b"a", b"a", b"a", 48, 16, 1)
    assert parsed.contract.chunk_count == 3
    written = envelope.encode(parsed.contract, 7, bytes(range(48)))
    assert envelope.decode(written, parsed.contract) == (bytes(range(48)), 7)
