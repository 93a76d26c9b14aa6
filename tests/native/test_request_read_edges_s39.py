"""A RequestRead of the checkpoint payload held at the payload's end by the C host and the reference
alike (probe s39 mutants3: native_request.c np_request_read's bound moved one byte -- a read running
one byte past the payload taken -- went through every related test).

docs/native-host.md, RequestRead: "`extent` bytes at `offset` ... of the checkpoint's payload (2; the
fresh state without one) to mapped memory".  tests/plans/Native/Request.bob's program reads its
40-byte payload (the contract: 16 + 16 + 8 bytes) in three RequestReads, the last 8 bytes at offset
32; that read made 9 bytes long runs one byte past the payload, which is the program's own fault
(exit 1, no file published), fresh state or not."""
from __future__ import annotations

import struct

import pytest

from native_helpers import PLANS, load_module, program_bytes, run_sides, write_host

ARGS = ["--input", "s.bin", "--checkpoint-out", "ck.bin", "--predictions", "p.bin", "--result", "r.bin"]
REQUEST_READ = 27


def nat(value: int) -> bytes:
    return value.to_bytes(8, "little")


def stream(tokens) -> bytes:
    import hashlib
    body = b"".join(struct.pack("<I", t) for t in tokens)
    return struct.pack("<8sIIIIQ32s", b"COPSTRM1", 1, 4, 256, 64, len(tokens), hashlib.sha256(body).digest()) + body


@pytest.fixture(scope="module")
def code():
    return program_bytes(load_module(PLANS / "Native" / "Request.bob"), "requestProgram")


def last_payload_read(code: bytes, extent: int, offset: int = 32) -> bytes:
    """The program with its last payload read (8 bytes at the immediate offset 32: operand kind 0, then
    the value) reading `extent` bytes at `offset`."""
    from bobc.native.program import decode
    reads = [c for c in decode(code).commands if c.name == "RequestRead" and c.n[0] == 2]
    assert [c.n[2] for c in reads] == [16, 16, 8]             # the 40-byte payload, read 16 + 16 + 8
    head = bytes([REQUEST_READ]) + nat(2) + nat(reads[-1].n[1])
    old = head + nat(8) + bytes([0]) + nat(32)
    assert code.count(old) == 1
    return code.replace(old, head + nat(extent) + bytes([0]) + nat(offset))


def run(tmp_path, code, name):
    host = write_host(tmp_path, f"{name}-host", code)
    tokens = [(i * 37 + 11) % 256 for i in range(60)]
    c, reference = run_sides(tmp_path, code, host, {"s.bin": stream(tokens)}, ["train", *ARGS], name=name)
    assert (c.status, c.stderr) == (reference.status, reference.stderr)
    return c


@pytest.mark.parametrize("extent, offset", [(9, 32), (0, 41)], ids=["a-byte-past", "an-empty-read-a-byte-past"])
def test_a_payload_read_one_byte_past_the_payload_is_refused_alike(tmp_path, code, extent, offset):
    c = run(tmp_path, last_payload_read(code, extent, offset), "past")
    assert c.status == 1, c.stderr
    said = f"(RequestRead): {extent} byte{'s' if extent != 1 else ''} at {offset} of the 40-byte checkpoint payload"
    assert said.encode() in c.stderr, c.stderr
    assert set(c.files) == {"s.bin"}


def test_an_empty_read_at_the_payloads_end_is_taken(tmp_path, code):
    # 0 bytes at 40: inside (at the end of) the 40-byte payload; the run goes on past this read
    c = run(tmp_path, last_payload_read(code, 0, 40), "end")
    assert b"checkpoint payload" not in c.stderr, c.stderr
