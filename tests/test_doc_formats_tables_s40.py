"""docs/formats.md's layout tables add up: each field starts where the one before it ends, and the
fixed parts end where the formats' own readers say (probe s40 docs9).

Recomputed from the tables' offset and size columns: Bob's input record ends at its heading's
1564 bytes (examples/bob/bob_model/formats.py RECORD_BYTES); the checkpoint envelope's fixed
header ends at 64, where the identities start (and a reader's "at least 64 bytes"); the token
stream's header ends at the 64 header bytes the stream declares (coppelius_model/stream.py
HEADER_BYTES), and seed 003's shard at its 36 bytes (partitioned_regression/formats.py
SHARD_BYTES)."""
from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
DOC = (REPO / "docs" / "formats.md").read_text(encoding="utf-8")


def _table(after: str) -> list[tuple[int, str]]:
    """(offset, size) rows of the first offset/size table after the heading line starting `after`."""
    start = DOC.index(after)
    lines = DOC[start:].splitlines()
    first = next(i for i, line in enumerate(lines) if line.startswith("| offset | size |"))
    rows = []
    for line in lines[first + 2:]:
        if not line.startswith("| "):
            break
        offset, size = (cell.strip() for cell in line.strip().strip("|").split("|")[:2])
        rows.append((offset, size))
    return rows


def _size(text: str) -> int | None:
    """A size cell's bytes: `8`, `4 x 4`; None for one that depends on the file (`payload`, `4n`)."""
    if re.fullmatch(r"\d+", text):
        return int(text)
    product = re.fullmatch(r"(\d+) x (\d+)", text)
    return int(product.group(1)) * int(product.group(2)) if product else None


def _fixed_end(rows) -> int:
    """Where the table's fixed fields end, checking each starts where the one before it ended."""
    at = 0
    for offset, size in rows:
        if not re.fullmatch(r"\d+", offset):
            break
        assert int(offset) == at, f"docs/formats.md: a field at {offset}, the one before it ended at {at}"
        width = _size(size)
        if width is None:
            break
        at += width
    return at


def _example(folder: str, module: str):
    sys.path.insert(0, str(REPO / folder))
    try:
        return __import__(module, fromlist=["_"])
    finally:
        sys.path.remove(str(REPO / folder))


def test_bobs_input_record_ends_at_its_size():
    heading = re.search(r"## Input record \((\d+) bytes", DOC)
    formats = _example("examples/bob", "bob_model.formats")
    assert _fixed_end(_table("## Input record")) == int(heading.group(1)) == formats.RECORD_BYTES


def test_the_envelope_header_ends_where_the_identities_start():
    rows = _table("## Checkpoint envelope")
    assert _fixed_end(rows) == 64
    assert ("64", "...") in rows and "at least 64 bytes (`truncated`)" in DOC


def test_the_token_stream_header_ends_at_its_header_bytes():
    stream = _example("examples/coppelius", "coppelius_model.stream")
    rows = _table("## Token stream")
    assert _fixed_end(rows) == stream.HEADER_BYTES == 64
    assert (str(stream.HEADER_BYTES), "4n") in rows


@pytest.mark.parametrize("heading", ["## Seed 003's checkpoint shard"])
def test_the_shard_is_its_bytes(heading):
    formats = _example("examples/partitioned_regression", "partitioned_regression.formats")
    said = re.search(r"A shard is (\d+) bytes", DOC)
    assert _fixed_end(_table(heading)) == int(said.group(1)) == formats.SHARD_BYTES
