"""A checkpoint refusal shows its sizes grouped by threes, in Bob's built host and in `bobc run
--reference` alike (probe s47 docsaudit).

Session 43 grouped the two size messages that showed bare numbers "as every other size message"
(tests/reference/test_sizes_grouped_s43.py), and writing-a-plan.md / host-steps.md show a record's
sizes so (`6,192,000 bytes, expected exactly 2,064`); yet a Bob checkpoint cut short said `its
header declares a 786432-byte payload, more than the 786344 bytes after its 432-byte header`, and the
damaged-header, header-past-the-file and foreign-size refusals kept bare numbers too, beside
`has trailing bytes: 786,877 bytes` for the same file one byte long.  A byte's position stays in plain
digits (`byte 425`, `bytes 0..N`), as the record checks' positions do (docs/writing-a-plan.md).

Expected texts are written by hand from docs/formats.md: Bob's envelope is H 432 + payload 786,432
(3 chunks of 262,144) + 12 = 786,876 bytes, 10 updates per invocation."""
from __future__ import annotations

import struct
import zlib

import pytest

from tests.reference.test_checkpoint_refusals_say_what_to_do import COPY, FOREIGN, put, refuse_checkpoint, resealed
from tests.reference.test_checkpoint_refusals_say_what_to_do import setup  # noqa: F401  (the module's fixture)

OURS = "pass a checkpoint this host's plan wrote"


def _sized(good: bytes, payload: int, chunk: int | None = None) -> bytes:
    """A self-consistent envelope (CRC, trailer) of Bob's header with a `payload`-byte payload."""
    h = struct.unpack_from("<I", good, 8)[0]
    header = bytearray(good[:h])
    struct.pack_into("<Q", header, 24, payload)
    if chunk is not None:
        struct.pack_into("<Q", header, 32, chunk)
    body = bytes(header) + bytes(payload)
    return body + struct.pack("<I", zlib.crc32(body)) + b"BOBCEND1"


def test_a_checkpoint_cut_within_its_payload_says_the_sizes_grouped_s47(setup):  # noqa: F811
    good = setup[3]
    assert len(good) == 786876
    status, said = refuse_checkpoint(setup, "cut.bin", good[:432 + 1000])
    assert status == 4
    assert said == ("checkpoint cut.bin: truncated: its header declares a 786,432-byte payload, more than the "
                    f"1,000 bytes after its 432-byte header; {COPY}"), said


def test_a_damaged_size_field_says_the_file_size_grouped_s47(setup):  # noqa: F811
    good = setup[3]
    status, said = refuse_checkpoint(setup, "flipped.bin", put(good, 24, "<B", good[24] ^ 0x10))
    assert status == 4
    assert said == ("checkpoint flipped.bin: corrupted: its header says payload bytes 786,448, this host's 786,432, "
                    f"in a file of this host's size (786,876 bytes): the header is damaged; {COPY}"), said


def test_a_header_past_the_file_says_both_sizes_grouped_s47(setup):  # noqa: F811
    good = setup[3]
    status, said = refuse_checkpoint(setup, "h.bin", put(good[:2000], 8, "<I", 4096))
    assert status == 4
    assert said == f"checkpoint h.bin: truncated: header bytes 4,096 do not fit a 2,000-byte file; {COPY}", said


@pytest.mark.parametrize("payload, chunk, part, words", [
    (786448, None, "payload bytes", "payload bytes differ: this host's 786,432, the checkpoint's 786,448"),
    (786432, 131072, "chunk bytes", "chunk bytes differ: this host's 262,144, the checkpoint's 131,072"),
])
def test_a_foreign_checkpoints_sizes_are_grouped_s47(setup, payload, chunk, part, words):  # noqa: F811
    status, said = refuse_checkpoint(setup, "f.bin", _sized(setup[3], payload, chunk))
    assert status == 5
    assert said == f"checkpoint f.bin: foreign checkpoint: {words}; {FOREIGN}", said


def test_updates_per_invocation_are_grouped_and_a_position_is_not_s47(setup):  # noqa: F811
    good = setup[3]
    status, said = refuse_checkpoint(setup, "u.bin", resealed(put(good, 40, "<Q", 1000)))
    assert status == 5
    assert said == ("checkpoint u.bin: foreign checkpoint: updates per invocation differ: this host's 10, the "
                    f"checkpoint's 1,000; {FOREIGN}"), said
    padded = bytearray(good)
    padded[425] = 1                    # identities end at 420: padding up to H 432
    status, said = refuse_checkpoint(setup, "p.bin", resealed(bytes(padded)))
    assert status == 4
    assert said == ("checkpoint p.bin: not a checkpoint this format writes: the header's padding after the "
                    f"identities is not zero (byte 425); {OURS}"), said
