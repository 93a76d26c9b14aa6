"""The reference host's envelope reader and record check (compiler/bobc/reference/envelope.py,
host.py) against docs/formats.md, on envelopes built here field by field (struct, zlib), not by
the encoder: cases session 39's mutation testing (notes/s39/probe-mutants.md) found no Python
test held.  Offsets: 8 H, 12 chunk count (u32), 16 step (u64), 24 payload bytes, 32 chunk bytes,
40 updates per invocation, 48 the four identity lengths, 64 the identities then zero padding to H;
H + payload the CRC-32 of bytes 0..H + payload, then BOBCEND1."""
from __future__ import annotations

import struct
import zlib

import pytest

from bobc.plan.model import CheckpointContract
from bobc.reference.envelope import decode
from bobc.reference.errors import BadCheckpoint, BadInputRecord, ForeignCheckpoint
from bobc.reference.host import check_record

# identities of 1 + 2 + 3 + 4 = 10 bytes: 74 bytes, so H = 80 and bytes 74..79 are padding
CONTRACT = CheckpointContract(b"s", b"ll", b"ddd", b"eeee", 48, 16, 5)
H = 80


def envelope(step=7, chunk_count=3, pad=None, payload=bytes(range(48)), chunk_bytes=16) -> bytes:
    header = bytearray(struct.pack("<8sIIQQQQ4I", b"BOBCENV1", H, chunk_count, step, len(payload), chunk_bytes, 5,
                                   1, 2, 3, 4)
                       + b"slldddeeee")
    header += bytes(H - len(header))
    if pad is not None:
        header[pad] = 1
    body = bytes(header) + payload
    return body + struct.pack("<I", zlib.crc32(body)) + b"BOBCEND1"


def test_the_hand_built_envelope_decodes_with_its_u64_step():
    payload, step = decode(envelope(step=2 ** 40 + 5), CONTRACT, "ck.bin")
    assert payload == bytes(range(48)) and step == 2 ** 40 + 5


@pytest.mark.parametrize("pad", range(74, 80))
def test_every_padding_byte_must_be_zero(pad):
    with pytest.raises(BadCheckpoint, match=rf"padding after the identities is not zero \(byte {pad}\)"):
        decode(envelope(pad=pad), CONTRACT, "ck.bin")


def test_another_chunk_count_is_foreign():
    with pytest.raises(ForeignCheckpoint, match="chunk count differs: this host's 3, the checkpoint's 4"):
        decode(envelope(chunk_count=4), CONTRACT, "ck.bin")


def test_chunks_one_byte_shorter_are_foreign():
    # 3 chunks of 15 bytes leave a 3-byte tail: they still tile the 48 bytes, but are not this host's
    with pytest.raises(ForeignCheckpoint, match="chunk bytes differ: this host's 16, the checkpoint's 15"):
        decode(envelope(chunk_bytes=15), CONTRACT, "ck.bin")


def test_a_record_one_byte_long_is_refused():
    with pytest.raises(BadInputRecord, match="9 bytes, expected exactly 8"):
        check_record((), 8, bytes(9), "in.rec")
    check_record((), 8, bytes(8), "in.rec")
