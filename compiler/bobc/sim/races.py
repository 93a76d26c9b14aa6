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
CHUNK = 1 << 17   # threads recorded at once
STORED, SHARED = 1, 2    # a place's flags: a block stored to it; two blocks touched it


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


def _spans(places: np.ndarray, dtype) -> np.ndarray | tuple:
    """An access's places, kept small: where they mostly run on one by one (a coalesced access), as
    (count, each run's first index, its first place), else as they are (in `dtype`)."""
    firsts = np.flatnonzero(places[1:] != places[:-1] + 1) + 1
    if 4 * (firsts.size + 1) >= places.size:
        return places.astype(dtype)
    firsts = np.r_[0, firsts]
    return places.size, firsts.astype(np.int32), places[firsts].astype(dtype)


def _places(held: np.ndarray | tuple) -> np.ndarray:
    """_spans's places back, as int64."""
    if not isinstance(held, tuple):
        return held.astype(np.int64)
    count, firsts, starts = held
    lengths = np.diff(np.r_[firsts, count])
    return np.repeat(starts.astype(np.int64) - firsts, lengths) + np.arange(count, dtype=np.int64)


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
        # each recorded access: (places, run starts, run segments, flags, pc) -- its records' segments as
        # runs (an access's threads come block by block), its flags one number where all are alike
        self._parts: list[tuple] = []
        # per place: a block that touched it + 1 (0: none yet), and flags STORED, SHARED (touched by
        # two blocks) -- zero-filled, so the pages of places never touched take no memory (the places
        # can be all the residents: 22 M words)
        self._first = np.zeros(self.places, dtype=np.int16 if blocks < 1 << 15 else np.int32)
        self._flags = np.zeros(self.places, dtype=np.uint8)
        self._any_suspect = False

    # ------------------------------------------------------------ while the launch runs
    def _new_segment(self, b: int) -> None:
        self.segment[b] = len(self.seg_block)
        self.seg_block.append(b)
        self.seg_epoch.append(self.epoch[b])
        self.seg_clock.append(self.clock[b])

    def access(self, addresses: np.ndarray, size: int, blocks: np.ndarray, pc: int, writes: bool) -> None:
        """Plain accesses of `size` bytes at `addresses` by threads of `blocks` (one per address)."""
        if addresses.size > CHUNK:     # in pieces: an access of 830,976 threads would hold ~150 MB of temporaries
            for k in range(0, addresses.size, CHUNK):
                self.access(addresses[k:k + CHUNK], size, blocks[k:k + CHUNK], pc, writes)
            return
        if addresses.size == 0:
            return
        addresses = addresses.astype(np.uint64)
        first = addresses // np.uint64(4)
        if size >= 4:       # naturally aligned: whole words
            count = size // 4
            words = first if count == 1 else (first[:, None] + np.arange(count, dtype=np.uint64)).ravel()
            masks = 0xF
            if count > 1:
                blocks = np.repeat(blocks, count)
        else:
            words = first
            offsets = (addresses % np.uint64(4)).astype(np.uint8)
            masks = (((1 << size) - 1) << offsets).astype(np.uint8)
        self._record(words, blocks, pc, masks, writes)

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
        masks = int(row_masks[0]) if (row_masks == row_masks[0]).all() else np.tile(row_masks, starts.size)
        self._record(words, np.full(words.size, block, dtype=np.int32), pc, masks, False)

    def _record(self, words, blocks, pc, masks, writes) -> None:
        """`masks`: each word's byte mask (uint8), or one int for all."""
        k = np.searchsorted(self.span_starts, words, side="right").astype(np.int64) - 1
        inside = k >= 0
        inside &= words < self.span_ends[np.maximum(k, 0)] if self.span_ends.size else False
        if not inside.all():
            words, blocks, k = words[inside], blocks[inside], k[inside]
            if not isinstance(masks, int):
                masks = masks[inside]
        if words.size == 0:
            return
        places = ((words - self.span_starts[k]).astype(np.int64) + self.span_first[k])
        blocks = blocks.astype(np.int32, copy=False)
        mark = (blocks + 1).astype(self._first.dtype)
        first = self._first[places]
        new = first == 0
        if new.any():
            self._first[places[new]] = mark[new]        # of several blocks at once, any one
            first = self._first[places]
        if writes:
            self._flags[places] |= STORED
        shared = first != mark
        if shared.any():
            self._flags[places[shared]] |= SHARED
        # a place becomes suspect only when an access touches it: this one's say whether any is now
        self._any_suspect = self._any_suspect or bool(self._suspect(places).any())
        runs = np.r_[0, np.flatnonzero(blocks[1:] != blocks[:-1]) + 1]
        flags = masks | (WRITE if writes else 0) if isinstance(masks, int) else masks | np.uint8(WRITE if writes else 0)
        self._parts.append((_spans(places, self.place_type), runs.astype(np.int32),
                            self.segment[blocks[runs]].astype(np.int32), flags, pc))

    def _suspect(self, places: np.ndarray) -> np.ndarray:
        """Which places two blocks touch, one storing."""
        return self._flags[places] == STORED | SHARED

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
        if not self._any_suspect:
            self._parts = []
            self._first = self._flags = None
            return None
        kept = []
        for held, runs, run_segs, flags, pc in self._parts:
            places = _places(held)
            keep = self._suspect(places)
            if keep.any():
                segs = np.repeat(run_segs, np.diff(np.r_[runs, places.size]))
                flags = np.full(places.size, flags, dtype=np.uint8) if isinstance(flags, int) else flags
                kept.append((places[keep], segs[keep], flags[keep], np.full(int(keep.sum()), pc, dtype=np.int32)))
        self._parts = []
        self._first = self._flags = None
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
