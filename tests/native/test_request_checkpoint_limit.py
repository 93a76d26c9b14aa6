"""A request host (its program opens a request) publishes checkpoints of the request's payload:
bobc refuses to build one whose checkpoint file a host could not read back (docs/limits.md, 1 GiB),
as it refuses a plan host's contract, where the `--entry` path built it (probe s29 coppelius
finding 1: a 13-layer shape trained once and could never resume)."""
from __future__ import annotations

import struct

import pytest

from native_helpers import PLANS, load_module, program_bytes

# the test request's payload, chunk and updates (tests/native/plans/Native/Request.bob), as
# RequestOpen's bytes hold them
TRIPLE = struct.pack("<QQQ", 40, 16, 6)


@pytest.fixture(scope="module")
def code():
    code = program_bytes(load_module(PLANS / "Native" / "Request.bob"), "requestProgram")
    assert code.count(TRIPLE) == 1
    return code


def with_payload(code: bytes, payload: int) -> bytes:
    return code.replace(TRIPLE, struct.pack("<QQQ", payload, 16, 6))


def test_a_request_whose_checkpoint_a_host_could_not_read_is_refused(code):
    from bobc.certify.limits import CHECKPOINT_FILE_BYTES, checkpoint_file_bytes
    from bobc.errors import BobcError
    from bobc.native.program import decode
    from bobc.native.request import parse_request
    from bobc.native.writer import native_host

    contract = parse_request(decode(code).commands[0].data).contract
    envelope = checkpoint_file_bytes(contract) - contract.payload_bytes
    most = CHECKPOINT_FILE_BYTES - envelope
    assert native_host(with_payload(code, most), "sm_90")              # the largest a host reads back
    with pytest.raises(BobcError) as refused:
        native_host(with_payload(code, most + 1), "sm_90")
    text = refused.value.render()
    assert f"the checkpoint's file is {CHECKPOINT_FILE_BYTES + 1:,} bytes" in text
    assert "could not resume from its own checkpoint" in text and "hint: make the model's checkpoint" in text
