"""Races between the blocks of one launch: two blocks' plain (non-atomic) accesses to one byte of
global memory, at least one a store, that no synchronization orders.

The PTX memory model (PTX ISA, "Memory Consistency Model") orders accesses of different CTAs only
through synchronization: a release pattern (a fence of .gpu or .sys scope -- MEMBAR.GPU /
MEMBAR.SC.GPU / MEMBAR.ALL.GPU / .SYS in SASS -- then a strong write, here an atomic) synchronizes
with an acquire pattern that observes it (an atomic reading the value written, or a later one of
the release sequence the atomics on that location form).  Anything else between two blocks is a
data race, and the GPU gives either order (or both: a read-modify-write seen twice or lost).

Granularity: a warp fences (its lanes are not told apart): a fence by a warp orders its own
accesses before it and those of its block's other warps that the block's synchronization ordered
before it (bobc.sim.warps: the warp's vector clock over its block's warps) -- so stores by several
warps need a barrier before the one thread's fence and atomic (ptxas's pattern), as the PTX model
says, or each warp's own fence before a barrier and the atomic.  An acquiring atomic orders its
own warp's later accesses, and its block's other warps' once the block's synchronization orders
them after it (what a warp acquired travels with bobc.sim.warps' clocks: WarpOrder calls arrive /
complete / move / drop here).  Two warps of one block are judged against each other too, on the
block's synchronization alone: WarpOrder.ordered reads the history of the warps' clocks (logged).
Atomics themselves never conflict (ATOMG / RED are not recorded as plain accesses).

Vector clocks, one per warp (what it acquired: a dict, block -> its warps' times, bobc.sim.warps'
one counter): a warp's fence keeps its warp clock (its own entry the fence's time) and what the
warp acquired; an
atomic on a word first acquires (joins) what the word's release sequence holds, then adds what
its warp releases: the fences of its block's warps ordered before the atomic (its own last one;
another warp's whose time the atomic's warp clock covers -- each warp's fence then a barrier then
one thread's atomic), joined.  Accesses are recorded
as (word, segment, warp, time, instruction, byte mask + store flag), a segment being a warp's
acquired clock between two changes; an access (block b, warp u, time t) happens before a segment
whose clock holds b with u's entry above t.  The check runs when the launch ends, on the words two
blocks, or two warps of one block, touch, one storing.
"""
from __future__ import annotations

import numpy as np

from .warps import WARP, WarpOrder

WRITE = 0x10      # the store flag beside a record's 4-bit byte mask
CHUNK = 1 << 17   # threads recorded at once
STORED, SHARED, WARPS = 1, 2, 4    # a place's flags: a block stored to it; two blocks touched it; two warps of one did


def _join(a: dict | None, b: dict | None) -> dict | None:
    """Two clocks joined (block -> its warps' times, elementwise greatest)."""
    if not b:
        return a
    if not a:
        return dict(b)
    out = dict(a)
    for k, v in b.items():
        mine = out.get(k)
        out[k] = v if mine is None else np.maximum(mine, v)
    return out


def _same(a: dict | None, b: dict | None) -> bool:
    a, b = a or {}, b or {}
    return a.keys() == b.keys() and all(np.array_equal(v, b[k]) for k, v in a.items())


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
    """Two blocks' (or two warps' of one block) unordered conflicting accesses (BlockOrder.first_race's
    answer)."""

    def __init__(self, word: int, byte_mask: int, first: tuple, second: tuple, warps: tuple | None = None):
        self.word, self.byte_mask = word, byte_mask
        self.first, self.second = first, second      # (block, pc, writes) each
        self.warps = warps                           # (warp, warp) in their block where both are one block's


class BlockOrder:
    def __init__(self, blocks: int, block_of_thread: np.ndarray, starts: np.ndarray, ends: np.ndarray, warps=None):
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
        # bobc.sim.warps.WarpOrder: the warps' clocks and time (threads padded to whole warps per block:
        # thread // 32 is its warp); None: each block one warp (its threads, one per block, not padded)
        if warps is None:
            warps, self.warp_of_thread = WarpOrder(blocks * WARP, WARP, 0), np.asarray(block_of_thread)
        else:
            self.warp_of_thread = np.arange(block_of_thread.size, dtype=np.int64) // WARP
        self.warps = warps
        warps.carry = self
        self.per_block = warps.per_block
        self.segment = np.arange(warps.warps, dtype=np.int64)      # each warp's current segment
        self.seg_block = (np.arange(warps.warps) // self.per_block).tolist()
        self.seg_clock: list[dict | None] = [None] * warps.warps
        # what each warp acquired (block -> its warps' times): its own acquiring atomics, and what the
        # block's synchronization carried to it from its block's other warps (arrive / complete)
        self.clock: list[dict | None] = [None] * warps.warps
        self.held: dict[tuple, dict | None] = {}               # a barrier's / mbarrier phase's arrivals' acquired clocks
        self._carrying = False                                 # whether any warp acquired anything yet
        # per warp, its last fence: its clock then (own entry the fence's time) and its block's clock then
        self.fence_clock = np.zeros((warps.warps, self.per_block), dtype=np.int64)
        self.fenced = np.zeros(warps.warps, dtype=bool)
        self.fence_acquired: dict[int, dict | None] = {}
        self.sync: dict[int, dict] = {}                        # word address -> its release sequence's clock
        # each recorded access: (places, run starts, run segments, run warps, flags, pc, time) -- its
        # records' segments and warps (in their blocks) as runs (an access's threads come warp by warp),
        # its flags one number where all are alike, the time (bobc.sim.warps) it was made at
        self._parts: list[tuple] = []
        # per place: a warp that touched it + 1 (0: none yet; its global index), and flags STORED, SHARED
        # (touched by two blocks), WARPS (by two warps of the first one's block; of others: SHARED keeps all)
        # two blocks) -- zero-filled, so the pages of places never touched take no memory (the places
        # can be all the residents: 22 M words)
        self._first = np.zeros(self.places, dtype=np.int16 if warps.warps < (1 << 15) - 1 else np.int32)
        warps.logged = self.per_block > 1        # two warps of a block are judged from the clocks' history
        self._flags = np.zeros(self.places, dtype=np.uint8)
        self._any_suspect = False

    # ------------------------------------------------------------ while the launch runs
    def _new_segment(self, w: int) -> None:
        self.segment[w] = len(self.seg_block)
        self.seg_block.append(w // self.per_block)
        self.seg_clock.append(self.clock[w])

    def _acquire(self, w: int, clock: dict | None) -> None:
        """Warp `w` (global index) is ordered after `clock`."""
        joined = _join(self.clock[w], clock)
        if not _same(joined, self.clock[w]):
            self.clock[w] = joined
            self._new_segment(w)
            self._carrying = True

    # the block's synchronization (bobc.sim.warps.WarpOrder calls these): what a warp acquired goes
    # with it to the warps that synchronize with it -- an acquire orders the acquiring warp's later
    # accesses and, through a barrier or an mbarrier, those of the warps that wait for it
    def arrive(self, key: tuple, warps) -> None:
        if not self._carrying:
            return
        held = self.held.get(key)
        for w in np.unique(np.asarray(warps)).tolist():
            held = _join(held, self.clock[w])
        self.held[key] = held

    def complete(self, key: tuple | None, warps, keep: bool = False) -> None:
        if not self._carrying:
            return
        warps = np.unique(np.asarray(warps)).tolist()
        joined = None if key is None else (self.held.get(key) if keep else self.held.pop(key, None))
        for w in warps:
            joined = _join(joined, self.clock[w])
        if joined:
            for w in warps:
                self._acquire(w, joined)

    def move(self, key: tuple, to: tuple) -> None:
        if self._carrying:
            self.held[to] = self.held.pop(key, None)

    def drop(self, key: tuple) -> None:
        self.held.pop(key, None)

    def access(self, addresses: np.ndarray, size: int, blocks: np.ndarray, pc: int, writes: bool,
               warps: np.ndarray | None = None) -> None:
        """Plain accesses of `size` bytes at `addresses` by threads of `blocks` (one per address) and
        of `warps` (their global warp indices; None: each block's first warp)."""
        if warps is None:
            warps = blocks.astype(np.int64) * self.per_block
        if addresses.size > CHUNK:     # in pieces: an access of 830,976 threads would hold ~150 MB of temporaries
            for k in range(0, addresses.size, CHUNK):
                self.access(addresses[k:k + CHUNK], size, blocks[k:k + CHUNK], pc, writes, warps[k:k + CHUNK])
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
                warps = np.repeat(warps, count)
        else:
            words = first
            offsets = (addresses % np.uint64(4)).astype(np.uint8)
            masks = (((1 << size) - 1) << offsets).astype(np.uint8)
        self._record(words, blocks, warps, pc, masks, writes)

    def rows(self, starts: np.ndarray, width: int, block: int, pc: int, warp: int | None = None) -> None:
        """A TMA copy's reads, issued by `warp` (None: the block's first) of `block`: rows [start,
        start + width) sharing their offset within a word."""
        if starts.size == 0:
            return
        offset = int(starts[0]) % 4
        count = (offset + width + 3) // 4
        j = np.arange(count)
        low, high = np.maximum(0, offset - 4 * j), np.minimum(4, offset + width - 4 * j)
        row_masks = np.array([((1 << int(h)) - 1) & ~((1 << int(lo)) - 1) for lo, h in zip(low, high)], dtype=np.uint8)
        words = ((starts.astype(np.uint64) // np.uint64(4))[:, None] + j.astype(np.uint64)).ravel()
        masks = int(row_masks[0]) if (row_masks == row_masks[0]).all() else np.tile(row_masks, starts.size)
        warp = block * self.per_block if warp is None else warp
        self._record(words, np.full(words.size, block, dtype=np.int32), np.full(words.size, warp, dtype=np.int64),
                     pc, masks, False)

    def _record(self, words, blocks, warps, pc, masks, writes) -> None:
        """`masks`: each word's byte mask (uint8), or one int for all."""
        k = np.searchsorted(self.span_starts, words, side="right").astype(np.int64) - 1
        inside = k >= 0
        inside &= words < self.span_ends[np.maximum(k, 0)] if self.span_ends.size else False
        if not inside.all():
            words, blocks, warps, k = words[inside], blocks[inside], warps[inside], k[inside]
            if not isinstance(masks, int):
                masks = masks[inside]
        if words.size == 0:
            return
        places = ((words - self.span_starts[k]).astype(np.int64) + self.span_first[k])
        blocks = blocks.astype(np.int32, copy=False)
        mark = (warps + 1).astype(self._first.dtype)
        first = self._first[places]
        new = first == 0
        if new.any():
            self._first[places[new]] = mark[new]        # of several warps at once, any one
            first = self._first[places]
        if writes:
            self._flags[places] |= STORED
        other = first != mark
        if other.any():
            shared = (first.astype(np.int64) - 1) // self.per_block != blocks
            if shared.any():
                self._flags[places[shared]] |= SHARED
            same = other & ~shared
            if same.any():
                self._flags[places[same]] |= WARPS
        # a place becomes suspect only when an access touches it: this one's say whether any is now
        self._any_suspect = self._any_suspect or bool(self._suspect(places).any())
        runs = np.r_[0, np.flatnonzero(warps[1:] != warps[:-1]) + 1]
        flags = masks | (WRITE if writes else 0) if isinstance(masks, int) else masks | np.uint8(WRITE if writes else 0)
        self._parts.append((_spans(places, self.place_type), runs.astype(np.int32),
                            self.segment[warps[runs]].astype(np.int32), (warps[runs] % self.per_block).astype(np.uint8),
                            flags, pc, self.warps.time))

    def _suspect(self, places: np.ndarray) -> np.ndarray:
        """Which places two blocks touch, one storing."""
        flags = self._flags[places]
        return ((flags & STORED) != 0) & ((flags & (SHARED | WARPS)) != 0)

    def _word(self, place: int) -> int:
        k = int(np.searchsorted(self.span_first, place, side="right")) - 1
        return int(self.span_starts[k]) + place - int(self.span_first[k])

    def fence(self, threads) -> None:
        """A fence of .gpu or .sys scope by `threads` (a mask, or True: all): each executing warp's
        accesses until now, and those its block's synchronization ordered before it (its clock in
        bobc.sim.warps), are fenced -- not its block's other warps' (PTX: a fence orders the
        executing thread's accesses and those ordered before them)."""
        warps = np.unique(self.warp_of_thread if threads is True else self.warp_of_thread[threads])
        self.fence_clock[warps] = self.warps.fence(warps)
        self.fenced[warps] = True
        for w in warps.tolist():
            self.fence_acquired[w] = self.clock[w]

    def _released(self, w: int) -> dict | None:
        """What an atomic by warp `w` releases now: the fences of its block's warps ordered before it
        (its own last one, and another warp's whose time its clock covers: a barrier after that
        warp's fence), each with what it fenced."""
        b, own = divmod(w, self.per_block)
        rows = slice(b * self.per_block, (b + 1) * self.per_block)
        clocks = self.fence_clock[rows]
        times = clocks[np.arange(self.per_block), np.arange(self.per_block)]
        valid = self.fenced[rows] & (self.warps.clock[w] > times)
        valid[own] = self.fenced[w]
        if not valid.any():
            return None
        out = {b: clocks[valid].max(axis=0)}
        seen = set()
        for u in (np.flatnonzero(valid) + b * self.per_block).tolist():
            acquired = self.fence_acquired.get(u)
            if acquired and id(acquired) not in seen:
                seen.add(id(acquired))
                out = _join(out, acquired)
        return out

    def atomic(self, addresses: np.ndarray, threads, returns: bool) -> None:
        """Atomics at `addresses` by `threads`, in the order the executor applies them: each
        acquires its word's release sequence (an atomic returning the value it read; for its warp:
        the block's other warps only through a barrier or an mbarrier after it, see arrive /
        complete) and adds what its warp's fences release (_released)."""
        blocks = self.block_of_thread if threads is True else self.block_of_thread[threads]
        warps = self.warp_of_thread if threads is True else self.warp_of_thread[threads]
        words = (addresses.astype(np.uint64) // np.uint64(4)).tolist()
        for word, b, w in zip(words, blocks.tolist(), warps.tolist()):
            held = self.sync.get(word)
            if returns and held:
                self._acquire(w, {k: v for k, v in held.items() if k != b})
            released = self._released(w) if self.fenced[w - w % self.per_block:w - w % self.per_block + self.per_block].any() else None
            if released is not None:
                self.sync[word] = _join(held, released)

    # ------------------------------------------------------------ when it ends
    def _before(self, segs_x, warps_x, times_x, segs_y) -> np.ndarray:
        """Whether each access (segment, warp in its block, time) x happens before segment y: y's
        block acquired a release of x's block that covers the warp's accesses up to that time."""
        blocks_x = np.asarray(self.seg_block, dtype=np.int64)[segs_x]
        nblocks = np.int64(self.blocks)
        keys, inverse = np.unique(segs_y.astype(np.int64) * nblocks + blocks_x, return_inverse=True)
        known = np.zeros((keys.size, self.per_block), dtype=np.int64)
        for k, key in enumerate(keys.tolist()):
            clock = self.seg_clock[key // self.blocks]
            row = clock.get(key % self.blocks) if clock else None
            if row is not None:
                known[k] = row
        return known[inverse.ravel(), warps_x.astype(np.int64)] > times_x

    def first_race(self) -> BlockRace | None:
        if not self._parts or (self.blocks < 2 and self.per_block < 2):
            return None
        if not self._any_suspect:
            self._parts = []
            self._first = self._flags = None
            return None
        kept = []
        for held, runs, run_segs, run_warps, flags, pc, time in self._parts:
            places = _places(held)
            keep = self._suspect(places)
            if keep.any():
                lengths = np.diff(np.r_[runs, places.size])
                segs, warps = np.repeat(run_segs, lengths), np.repeat(run_warps, lengths)
                flags = np.full(places.size, flags, dtype=np.uint8) if isinstance(flags, int) else flags
                n = int(keep.sum())
                kept.append((places[keep], segs[keep], warps[keep], flags[keep], np.full(n, pc, dtype=np.int32),
                             np.full(n, time, dtype=np.int64)))
        self._parts = []
        self._first = self._flags = None
        if not kept:
            return None
        words, segs, warps, flags, pcs, times = (np.concatenate(column) for column in zip(*kept))
        del kept
        blocks = np.asarray(self.seg_block, dtype=np.int32)[segs]
        # one record per (word, segment, warp, flags, time): a warp's accesses between two of its
        # synchronizations are alike to either check
        order = np.lexsort((times, flags, warps, segs, words))
        words, segs, warps, pcs, flags, blocks, times = (x[order] for x in (words, segs, warps, pcs, flags, blocks, times))
        first = np.r_[True, (words[1:] != words[:-1]) | (segs[1:] != segs[:-1]) | (warps[1:] != warps[:-1])
                      | (flags[1:] != flags[:-1]) | (times[1:] != times[:-1])]
        words, segs, warps, pcs, flags, blocks, times = (x[first] for x in (words, segs, warps, pcs, flags, blocks, times))
        starts = np.flatnonzero(np.r_[True, words[1:] != words[:-1]])
        lengths = np.diff(np.r_[starts, words.size])
        group_start = np.repeat(starts, lengths)
        group_length = np.repeat(lengths, lengths)
        writers = np.flatnonzero(flags & WRITE)
        # every store paired with every record of its word
        counts = group_length[writers]
        i = np.repeat(writers, counts)
        j = np.repeat(group_start[writers], counts) + (np.arange(counts.sum()) - np.repeat(np.cumsum(counts) - counts, counts))
        conflict = ((blocks[i] != blocks[j]) | (warps[i] != warps[j])) & ((flags[i] & flags[j] & 0xF) != 0)
        i, j = i[conflict], j[conflict]
        if i.size == 0:
            return None
        ordered = np.zeros(i.size, dtype=bool)
        apart = blocks[i] != blocks[j]
        k = np.flatnonzero(apart)
        if k.size:
            ordered[k] = (self._before(segs[i[k]], warps[i[k]], times[i[k]], segs[j[k]])
                          | self._before(segs[j[k]], warps[j[k]], times[j[k]], segs[i[k]]))
        k = np.flatnonzero(~apart)         # two warps of one block: the block's synchronization (bobc.sim.warps)
        if k.size:
            x, y = i[k], j[k]
            ordered[k] = (self.warps.ordered(blocks[x], warps[x], times[x], warps[y], times[y])
                          | self.warps.ordered(blocks[x], warps[y], times[y], warps[x], times[x]))
        unordered = np.flatnonzero(~ordered)
        if unordered.size == 0:
            return None
        a, b = int(i[unordered[0]]), int(j[unordered[0]])
        first, second = sorted((a, b), key=lambda k: (int(blocks[k]), int(times[k]), int(pcs[k])))
        return BlockRace(self._word(int(words[a])), int(flags[a] & flags[b] & 0xF),
                         (int(blocks[first]), int(pcs[first]), bool(flags[first] & WRITE)),
                         (int(blocks[second]), int(pcs[second]), bool(flags[second] & WRITE)),
                         None if blocks[a] != blocks[b] else (int(warps[first]), int(warps[second])))
