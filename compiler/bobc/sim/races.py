"""Races between the blocks of one launch: two blocks' plain (non-atomic) accesses to one byte of
global memory, at least one a store, that no synchronization orders.

The PTX memory model (PTX ISA, "Memory Consistency Model") orders accesses of different CTAs only
through synchronization: a release pattern (a fence of .gpu or .sys scope -- MEMBAR.GPU /
MEMBAR.SC.GPU / MEMBAR.ALL.GPU / .SYS in SASS -- then a strong write, here an atomic) synchronizes
with an acquire pattern that observes it (an atomic reading the value written, or a later one of
the release sequence the atomics on that location form).  Anything else between two blocks is a
data race, and the GPU gives either order (or both: a read-modify-write seen twice or lost).

Granularity: each block is one thread of this order (its accesses in the order the simulator
issues them); ordering between the block's own threads (its barriers) is not judged here.  So a
block's accesses before its fence are released by its next atomic whichever thread executes them
(ptxas's pattern puts a BAR.SYNC between the threads' stores and the one thread's fence and
atomic).  Atomics themselves never conflict (ATOMG / RED are not recorded as plain accesses).

Vector clocks, one per block (a dict: block -> epoch known to have happened before; its own
epoch kept apart): a fence starts a new epoch and keeps the clock it closes as what the block's
later atomics release; an atomic on a word first acquires (joins) what the word's release
sequence holds, then adds its block's released clock to it.  Accesses are recorded as (word,
segment, instruction, byte mask + store flag), a segment being a block's (epoch, clock) between
two synchronizations; the check runs when the launch ends, on the words two blocks touch, one
storing.
"""
from __future__ import annotations

import numpy as np

WRITE = 0x10      # the store flag beside a record's 4-bit byte mask


def _join(a: dict | None, b: dict | None) -> dict | None:
    if not b:
        return a
    if not a:
        return dict(b)
    out = dict(a)
    for k, v in b.items():
        if out.get(k, -1) < v:
            out[k] = v
    return out


class BlockRace:
    """Two blocks' unordered conflicting accesses (BlockOrder.first_race's answer)."""

    def __init__(self, word: int, byte_mask: int, first: tuple, second: tuple):
        self.word, self.byte_mask = word, byte_mask
        self.first, self.second = first, second      # (block, pc, writes) each


class BlockOrder:
    def __init__(self, blocks: int, block_of_thread: np.ndarray, starts: np.ndarray, ends: np.ndarray):
        """`starts`, `ends`: the words stores can reach (sorted, disjoint [start, end) spans of
        address // 4).  A record keeps its word's place among them (a launch of 3,000 blocks records
        millions); an access to a word outside them is not recorded: no store can race with it."""
        self.blocks = blocks
        self.span_starts, self.span_ends = starts, ends
        sizes = (ends - starts).astype(np.int64)
        self.span_first = np.r_[0, np.cumsum(sizes)[:-1]].astype(np.int64)      # each span's first place
        self.places = int(sizes.sum())
        self.place_type = np.uint32 if self.places < 1 << 32 else np.uint64
        self.block_of_thread = block_of_thread
        self.segment = np.arange(blocks, dtype=np.int64)       # each block's current segment
        self.seg_block = list(range(blocks))
        self.seg_epoch = [0] * blocks
        self.seg_clock: list[dict | None] = [None] * blocks
        self.epoch = [0] * blocks
        self.clock: list[dict | None] = [None] * blocks       # other blocks' epochs acquired
        self.released: list[dict | None] = [None] * blocks    # what the block's next atomic releases
        self.sync: dict[int, dict] = {}                        # word address -> its release sequence's clock
        self._parts: list[tuple] = []        # (places, segments, flags, pc) of each recorded access
        self._low = self._high = self._stored = None   # per place: lowest and highest block, a store

    # ------------------------------------------------------------ while the launch runs
    def _new_segment(self, b: int) -> None:
        self.segment[b] = len(self.seg_block)
        self.seg_block.append(b)
        self.seg_epoch.append(self.epoch[b])
        self.seg_clock.append(self.clock[b])

    def access(self, addresses: np.ndarray, size: int, blocks: np.ndarray, pc: int, writes: bool) -> None:
        """Plain accesses of `size` bytes at `addresses` by threads of `blocks` (one per address)."""
        if addresses.size == 0:
            return
        addresses = addresses.astype(np.uint64)
        first = addresses // np.uint64(4)
        if size >= 4:       # naturally aligned: whole words
            count = size // 4
            words = first if count == 1 else (first[:, None] + np.arange(count, dtype=np.uint64)).ravel()
            masks = np.full(words.size, 0xF, dtype=np.uint8)
            segs = np.repeat(self.segment[blocks], count)
            blocks = np.repeat(blocks, count)
        else:
            words = first
            offsets = (addresses % np.uint64(4)).astype(np.uint8)
            masks = (((1 << size) - 1) << offsets).astype(np.uint8)
            segs = self.segment[blocks]
        self._record(words, segs, blocks, pc, masks, writes)

    def rows(self, starts: np.ndarray, width: int, block: int, pc: int) -> None:
        """A TMA copy's reads: rows [start, start + width) sharing their offset within a word."""
        if starts.size == 0:
            return
        offset = int(starts[0]) % 4
        count = (offset + width + 3) // 4
        j = np.arange(count)
        low, high = np.maximum(0, offset - 4 * j), np.minimum(4, offset + width - 4 * j)
        row_masks = np.array([((1 << int(h)) - 1) & ~((1 << int(lo)) - 1) for lo, h in zip(low, high)], dtype=np.uint8)
        words = ((starts.astype(np.uint64) // np.uint64(4))[:, None] + j.astype(np.uint64)).ravel()
        masks = np.tile(row_masks, starts.size)
        self._record(words, np.full(words.size, self.segment[block], dtype=np.int64),
                     np.full(words.size, block, dtype=np.int64), pc, masks, False)

    def _record(self, words, segs, blocks, pc, masks, writes) -> None:
        k = np.searchsorted(self.span_starts, words, side="right").astype(np.int64) - 1
        inside = k >= 0
        inside &= words < self.span_ends[np.maximum(k, 0)] if self.span_ends.size else False
        if not inside.all():
            words, segs, blocks, masks, k = words[inside], segs[inside], blocks[inside], masks[inside], k[inside]
        if words.size == 0:
            return
        places = ((words - self.span_starts[k]).astype(np.int64) + self.span_first[k]).astype(self.place_type)
        segs = segs.astype(np.int32)
        if self._low is None:
            self._low = np.full(self.places, np.iinfo(np.int32).max, dtype=np.int32)
            self._high = np.full(self.places, -1, dtype=np.int32)
            self._stored = np.zeros(self.places, dtype=bool)
        blocks = blocks.astype(np.int32)
        np.minimum.at(self._low, places, blocks)
        np.maximum.at(self._high, places, blocks)
        if writes:
            self._stored[places] = True
        self._parts.append((places, segs, np.asarray(masks, dtype=np.uint8) | np.uint8(WRITE if writes else 0), pc))

    def _word(self, place: int) -> int:
        k = int(np.searchsorted(self.span_first, place, side="right")) - 1
        return int(self.span_starts[k]) + place - int(self.span_first[k])

    def fence(self, threads) -> None:
        """A fence of .gpu or .sys scope by `threads` (a mask, or True: all): each block executing it
        starts a new epoch; its accesses until now are what its later atomics release."""
        blocks = range(self.blocks) if threads is True else np.unique(self.block_of_thread[threads]).tolist()
        for b in blocks:
            self.released[b] = _join(self.clock[b], {b: self.epoch[b]})
            self.epoch[b] += 1
            self._new_segment(b)

    def atomic(self, addresses: np.ndarray, threads, returns: bool) -> None:
        """Atomics at `addresses` by `threads`, in the order the executor applies them: each
        acquires its word's release sequence (an atomic returning the value it read) and adds the
        release its block's last fence made."""
        blocks = self.block_of_thread if threads is True else self.block_of_thread[threads]
        words = (addresses.astype(np.uint64) // np.uint64(4)).tolist()
        for word, b in zip(words, blocks.tolist()):
            held = self.sync.get(word)
            if returns and held:
                joined = _join(self.clock[b], {k: v for k, v in held.items() if k != b})
                if joined != self.clock[b]:
                    self.clock[b] = joined
                    self._new_segment(b)
            if self.released[b] is not None:
                self.sync[word] = _join(held, self.released[b])

    # ------------------------------------------------------------ when it ends
    def _before(self, x: int, y: int) -> bool:
        """Segment x happens before segment y (or both are one block's)."""
        bx = self.seg_block[x]
        if self.seg_block[y] == bx:
            return True
        clock = self.seg_clock[y]
        return clock is not None and clock.get(bx, -1) >= self.seg_epoch[x]

    def first_race(self) -> BlockRace | None:
        if not self._parts or self.blocks < 2:
            return None
        suspect = self._stored & (self._low != self._high)     # places two blocks touch, one storing
        self._low = self._high = self._stored = None
        kept = []
        for places, segs, flags, pc in self._parts:
            keep = suspect[places]
            if keep.any():
                kept.append((places[keep], segs[keep], flags[keep], np.full(int(keep.sum()), pc, dtype=np.int32)))
        self._parts = []
        del suspect
        if not kept:
            return None
        words, segs, flags, pcs = (np.concatenate(column) for column in zip(*kept))
        del kept
        blocks = np.asarray(self.seg_block, dtype=np.int32)[segs]
        # one record per (word, segment, flags): the first instruction (in execution order) that made it
        order = np.lexsort((flags, segs, words))
        words, segs, pcs, flags, blocks = words[order], segs[order], pcs[order], flags[order], blocks[order]
        first = np.r_[True, (words[1:] != words[:-1]) | (segs[1:] != segs[:-1]) | (flags[1:] != flags[:-1])]
        words, segs, pcs, flags, blocks = words[first], segs[first], pcs[first], flags[first], blocks[first]
        starts = np.flatnonzero(np.r_[True, words[1:] != words[:-1]])
        lengths = np.diff(np.r_[starts, words.size])
        group_start = np.repeat(starts, lengths)
        group_length = np.repeat(lengths, lengths)
        writers = np.flatnonzero(flags & WRITE)
        # every store paired with every record of its word
        counts = group_length[writers]
        i = np.repeat(writers, counts)
        j = np.repeat(group_start[writers], counts) + (np.arange(counts.sum()) - np.repeat(np.cumsum(counts) - counts, counts))
        conflict = (blocks[i] != blocks[j]) & ((flags[i] & flags[j] & 0xF) != 0)
        i, j = i[conflict], j[conflict]
        if i.size == 0:
            return None
        nseg = np.int64(len(self.seg_block))
        keys, inverse = np.unique(segs[i].astype(np.int64) * nseg + segs[j], return_inverse=True)
        ordered = np.array([self._before(int(k // nseg), int(k % nseg)) or self._before(int(k % nseg), int(k // nseg))
                            for k in keys.tolist()], dtype=bool)
        unordered = np.flatnonzero(~ordered[inverse.ravel()])
        if unordered.size == 0:
            return None
        a, b = int(i[unordered[0]]), int(j[unordered[0]])
        first, second = sorted((a, b), key=lambda k: (int(blocks[k]), int(pcs[k])))
        return BlockRace(self._word(int(words[a])), int(flags[a] & flags[b] & 0xF),
                         (int(blocks[first]), int(pcs[first]), bool(flags[first] & WRITE)),
                         (int(blocks[second]), int(pcs[second]), bool(flags[second] & WRITE)))
