"""bobc.sim.races's records (probe s39 raceperf): however an access is kept (runs of consecutive
words, sub-word byte masks, pieces of a large access), a launch with no synchronization has a race
exactly when two blocks touch one byte and one of them stores -- checked against a brute-force
count over the bytes themselves."""
from __future__ import annotations

import numpy as np
import pytest

from bobc.sim import races
from bobc.sim.races import BlockOrder

BASE = 0x10_0000_0000      # a word-aligned arena start; the spans are of words (address // 4)


def _order(blocks: int, words: int) -> BlockOrder:
    return BlockOrder(blocks, np.zeros(1, dtype=np.int64), np.array([BASE // 4], dtype=np.uint64),
                      np.array([BASE // 4 + words], dtype=np.uint64))


def _conflicts(accesses) -> set[tuple[int, int]]:
    """(byte address, pair of blocks) of every byte two blocks touch, one storing."""
    touched: dict[int, list[tuple[int, bool]]] = {}
    for addresses, size, blocks, writes in accesses:
        for a, b in zip(addresses.tolist(), blocks.tolist()):
            for byte in range(a, a + size):
                touched.setdefault(byte, []).append((b, writes))
    out = set()
    for byte, who in touched.items():
        for b1, w1 in who:
            for b2, w2 in who:
                if b1 != b2 and (w1 or w2):
                    out.add((byte, min(b1, b2), max(b1, b2)))
    return out


@pytest.mark.parametrize("seed", range(40))
def test_race_found_exactly_when_two_blocks_conflict(seed):
    rng = np.random.default_rng(seed)
    blocks, words = int(rng.integers(2, 6)), 64
    order = _order(blocks, words)
    accesses = []
    for pc in range(int(rng.integers(1, 6))):
        size = int(rng.choice([1, 2, 4, 8, 16]))
        threads = int(rng.integers(1, 40))
        who = np.sort(rng.integers(0, blocks, threads))
        if rng.random() < 0.5:      # coalesced: each block its own consecutive elements
            start = int(rng.integers(0, words * 4 // size - threads)) if words * 4 // size > threads else 0
            index = start + np.arange(threads)
        else:
            index = rng.integers(0, words * 4 // size, threads)
        addresses = (BASE + index * size).astype(np.uint64)
        writes = bool(rng.random() < 0.4)
        accesses.append((addresses, size, who, writes))
        order.access(addresses, size, who, pc * 16, writes)
    expected = _conflicts(accesses)
    race = order.first_race()
    assert (race is not None) == bool(expected)
    if race is not None:
        (b1, _, w1), (b2, _, w2) = race.first, race.second
        assert b1 != b2 and (w1 or w2)
        for bit in range(4):
            if race.byte_mask >> bit & 1:
                assert (race.word * 4 + bit, min(b1, b2), max(b1, b2)) in expected


def test_race_across_the_pieces_of_a_large_access(monkeypatch):
    """An access larger than the pieces it is recorded in: block 1's last thread stores the word
    block 0's first thread loaded, the two in different pieces."""
    monkeypatch.setattr(races, "CHUNK", 8)
    order = _order(2, 64)
    addresses = (BASE + 4 * np.arange(20)).astype(np.uint64)
    order.access(addresses, 4, np.zeros(20, dtype=np.int64), 0x10, False)
    order.access(np.array([BASE + 4 * 19], dtype=np.uint64), 4, np.ones(1, dtype=np.int64), 0x20, True)
    race = order.first_race()
    assert race is not None and race.word == BASE // 4 + 19
    assert race.first == (0, 0x10, False) and race.second == (1, 0x20, True)


def test_one_block_per_word_passes():
    """Each block stores its own consecutive words and loads them back: no race."""
    order = _order(4, 4096)
    who = np.repeat(np.arange(4), 256)
    addresses = (BASE + 4 * np.arange(1024)).astype(np.uint64)
    order.access(addresses, 4, who, 0x10, True)
    order.access(addresses, 4, who, 0x20, False)
    assert order.first_race() is None
