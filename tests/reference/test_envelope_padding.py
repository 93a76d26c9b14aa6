"""The reference runner's envelope reader refuses a header whose padding after the
identities is not zero, as the C runtime (host_runtime.c rt_envelope_check), the native
request reader and bob_model.formats do: exit 4, naming the byte (probe s27, finding 4)."""
from __future__ import annotations

import struct
import zlib

import pytest

from bob_model.formats import decode_checkpoint as bob_decode
from bob_model.model import bob_contract
from bobc.reference.envelope import FIXED, decode, encode, header_bytes
from bobc.reference.errors import BadCheckpoint

CONTRACT = bob_contract()


def _padded_nonzero() -> tuple[bytes, int]:
    good = encode(CONTRACT, 30, bytes(CONTRACT.payload_bytes))
    first_pad = FIXED + len(CONTRACT.schema) + len(CONTRACT.learner) + len(CONTRACT.data) + len(CONTRACT.seed)
    assert first_pad < header_bytes(CONTRACT), "Bob's contract has header padding"
    bad = bytearray(good)
    bad[first_pad] = 1
    body = len(bad) - 12
    struct.pack_into("<I", bad, body, zlib.crc32(bytes(bad[:body])))
    return bytes(bad), first_pad


def test_good_envelope_still_decodes():
    payload, step = decode(encode(CONTRACT, 30, bytes(CONTRACT.payload_bytes)), CONTRACT, "ck.bin")
    assert step == 30 and payload == bytes(CONTRACT.payload_bytes)


def test_nonzero_padding_is_a_bad_checkpoint():
    data, byte = _padded_nonzero()
    with pytest.raises(BadCheckpoint) as caught:
        decode(data, CONTRACT, "ck.bin")
    assert caught.value.exit_code == 4
    assert f"padding after the identities is not zero (byte {byte})" in str(caught.value)
    # the same verdict as Bob's own format reader
    with pytest.raises(BadCheckpoint):
        bob_decode(data, CONTRACT, "ck.bin")
