"""An oversized checkpoint file is judged by its header's identities only where they lie inside the
header (probe s39 mutants2, the previous report's V4: identities_refusal let an identity run up to 16
bytes past the header, and on this path no earlier sum-of-lengths check refuses it first, so the
bytes after the header were compared as the identity and the file called foreign).

docs/formats.md, "Checkpoint envelope": magic BOBCENV1 at 0, header bytes H u32 at 8, the four
identity lengths u32 at 48, 52, 56, 60, the identities from byte 64 within the H-byte header.  The
file is built with struct from that table, not by bobc's encoder.  An identity running past H is a
malformed header (not the other identity of a foreign checkpoint), so the size refusal stands."""
from __future__ import annotations

import struct

import pytest

from bobc.plan.model import CheckpointContract
from bobc.reference.envelope import foreign_by_header
from bobc.reference.errors import ForeignCheckpoint

CONTRACT = CheckpointContract(b"schema", b"learner", b"data", b"seed", 64, 64, 1)


def oversized(path, lengths, identities: bytes, h: int = 80) -> None:
    header = struct.pack("<8sIIQQQQ4I", b"BOBCENV1", h, 1, 0, 64, 64, 1, *lengths)
    assert len(header) == 64
    body = (header + identities).ljust(h, b"\0")[:h]
    path.write_bytes(body + b"X" * 200)          # the payload's bytes follow the header


def test_an_identity_running_past_the_header_is_not_judged_foreign(tmp_path):
    path = tmp_path / "c.bin"
    # the schema identity says 20 bytes from byte 64: to 84, 4 past an 80-byte header
    oversized(path, (20, 0, 0, 0), b"S" * 16)
    assert foreign_by_header(path, CONTRACT, 100) is None


def test_an_identity_inside_the_header_that_differs_is_foreign(tmp_path):
    path = tmp_path / "c.bin"
    oversized(path, (6, 0, 0, 0), b"SCHEMA")
    with pytest.raises(ForeignCheckpoint, match="schema identity differs from byte 0"):
        foreign_by_header(path, CONTRACT, 100)
