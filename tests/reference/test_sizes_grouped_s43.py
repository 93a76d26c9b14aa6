"""The two size messages that showed bare numbers are grouped by threes, as every other size message
(probe s43 smallfix): the reader's bound ("N bytes, more than an input record can be (L bytes at most
are read)") and a checkpoint whose size disagrees with its header ("has trailing bytes" / "truncated").
runtime_c (rt_grouped; tests in runtime_c/tests/test_host_runtime.c test_sizes_grouped_s43) and
`bobc run --reference` word them alike.

The expected texts are written by hand: 1,073,741,824 is the 1 GiB every reader stops at
(docs/limits.md), the file one byte past it sparse; 4,172 is a 64-byte header + a 4,096-byte payload
+ the 12-byte trailer (docs/formats.md, "Checkpoint envelope").
"""
from __future__ import annotations

import struct

import pytest

from bobc.plan.model import CheckpointContract
from bobc.reference.envelope import MAGIC, decode
from bobc.reference.errors import BadCheckpoint, BadInputRecord
from bobc.reference.safe_io import read_input

CONTRACT = CheckpointContract(b"s", b"l", b"d", b"seed", 3 * 4096, 4096, 7)


def _envelope(size: int) -> bytes:
    """A header (H 64, payload 4,096) in a file of `size` bytes: the sizes disagree."""
    head = MAGIC + struct.pack("<I", 64) + bytes(12) + struct.pack("<Q", 4096)
    return head + bytes(size - len(head))


@pytest.mark.parametrize("size, word", [(4173, "has trailing bytes"), (4171, "truncated")])
def test_a_checkpoint_whose_size_disagrees_shows_grouped_sizes(size, word):
    with pytest.raises(BadCheckpoint) as caught:
        decode(_envelope(size), CONTRACT, "f")
    assert caught.value.detail.startswith(
        f"{word}: {size // 1000},{size % 1000:03} bytes, but its header (H 64 + payload 4,096 + 12) says 4,172; ")


def test_a_file_past_the_readers_bound_shows_grouped_sizes(tmp_path):
    big = tmp_path / "big.bin"
    with open(big, "wb") as f:
        f.truncate((1 << 30) + 1)       # sparse: nothing is written or read
    with pytest.raises(BadInputRecord) as caught:
        read_input(big, BadInputRecord)
    assert str(caught.value).endswith(
        "big.bin: 1,073,741,825 bytes, more than an input record can be (1,073,741,824 bytes at most are read)")
