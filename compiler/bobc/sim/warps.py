"""Races within a block: two warps' plain accesses to one byte of the block's shared memory, at
least one a store, that no synchronization of the block orders.

The PTX memory model (PTX ISA, "Memory Consistency Model"; CUDA's compute-sanitizer racecheck
checks the same thing) orders the threads of a CTA only through synchronization: a barrier
(bar.sync / bar.red / barrier.cluster: its arrivals happen before its waiters go on; bar.arrive
arrives without waiting), an mbarrier (an arrive releases, a test_wait / try_wait that sees the
phase complete acquires).  Warp collectives (SHFL, VOTE, REDUX, MATCH) order nothing across warps.
Anything else between two warps is a data race: on a GPU the warps are scheduled in any order,
while the simulator's lock-step order gives one answer.

Granularity: a warp is one thread of this order (its accesses in the order the simulator issues
them); the lanes of one warp are not judged against each other.  Shared atomics (ATOMS) are not
recorded (they never race with each other), nor are asynchronous copies' writes (TMA's, LDGSTS's:
their own checks hold the bytes until the copy is waited for) or warpgroup MMAs' reads (the
executor's own check refuses a store to bytes an MMA still reads).

Time is one counter for the launch, advanced at every synchronization.  Each warp keeps a vector
clock over its block's warps: clock[w, u] = t means warp w is ordered after warp u's accesses made
before time t.  A barrier, when it completes, joins its participants' clocks (and the clocks BAR.ARV
arrivals left) and sets each participant's entry to the time it completes (a waiting warp makes no
access in between); an mbarrier arrive joins the arriving warp's clock, its own entry the time of
the arrive, into the phase; a wait that sees the phase acquires it.  Per shared byte: the last
store (warp + 1, time) and the reads since (a mask of warps and, while they all read it at one time,
that time; where they read it at different times -- consumers on their own paths -- each reader's
latest read, its instruction and lane, so a store ordered after every reader's own read passes
whenever each read, and a store that races names the reader it races with, not the latest).  The
per-reader arrays are zero-filled [bytes, warps] arrays written only for such bytes: untouched
pages take no memory.  Where the readers all read at one time (between the same synchronizations),
a race names the racing warp with the latest reader's instruction and lane (not kept per warp there:
that would write a [bytes, warps] row for most shared tiles, which warps read in their own
instructions between the same barriers).

A fence (MEMBAR of .gpu / .sys scope) by a warp orders its own accesses and those its clock holds
(fence(): its clock with its own entry now); bobc.sim.races uses that for what the warp's later
atomics release to other blocks.
Where bobc.sim.races judges two warps' global accesses (`logged`), the clocks' changes are kept
(_log: per barrier completion its block, time and warps, the clock only where not every entry is
the time; per mbarrier wait that changed a warp's clock, which then starts a new time) and
ordered() reads a warp's clock at a past time from them.  What a warp acquired from other blocks
travels with the same synchronization (`carry`: bobc.sim.races.BlockOrder).
"""
from __future__ import annotations

from array import array

import numpy as np

WARP = 32


class WarpRace:
    """Two warps' unordered conflicting accesses to one shared byte (WarpOrder's answer)."""

    def __init__(self, byte: int, first: tuple, second: tuple):
        self.byte = byte                     # index into the launch's shared memory (block * size + offset)
        self.first, self.second = first, second   # (thread, pc, writes) each: the earlier access first


class WarpOrder:
    def __init__(self, threads: int, padded: int, shared_bytes: int):
        """`padded`: a block's threads rounded up to whole warps; `shared_bytes`: each block's."""
        self.per_block = padded // WARP
        self.padded = padded
        self.warps = threads // WARP
        self.shared_bytes = shared_bytes
        self.judged = self.per_block > 1 and shared_bytes > 0     # whether shared accesses are judged here
        self.time = 1
        self.clock = np.zeros((self.warps, self.per_block), dtype=np.int64)
        self.arrived: dict[tuple[int, int], np.ndarray] = {}       # (block, barrier) -> BAR.ARV arrivals' clock
        self.phase: dict[tuple[int, int], np.ndarray] = {}         # (block, mbarrier) -> the open phase's clock
        self.completed: dict[tuple[int, int], np.ndarray] = {}     # (block, mbarrier) -> the last completed phase's
        # bobc.sim.races.BlockOrder, where the launch has several blocks: what each warp acquired from
        # other blocks travels along the same synchronization (its arrive / complete / move / drop)
        self.carry = None
        # the clocks' history, where `logged` (bobc.sim.races: two warps' global accesses judged when
        # the launch ends): per change of warps' clocks, its block, time, the warps (a mask) and
        # their clock -- kept only where it is not every entry that time (a whole block's barrier)
        self.logged = False
        self.log_block, self.log_time, self.log_mask = array("q"), array("q"), array("q")
        self.log_rows_at, self.log_rows = array("q"), array("q")     # the events whose clock is kept, and it (flat)
        self._shadow = None

    def _make_shadow(self, size: int) -> None:
        # zero-filled (calloc'd): the pages of bytes never touched take no memory
        self.w_warp = np.zeros(size, dtype=np.uint8)      # last store's warp in its block + 1 (0: none)
        self.w_time = np.zeros(size, dtype=np.int32)
        self.w_thread = np.zeros(size, dtype=np.uint16)   # its thread in the block and instruction // 16,
        self.w_pc = np.zeros(size, dtype=np.uint16)       # for the message
        self.r_mask = np.zeros(size, dtype=np.uint32)     # warps that read it since (bit per warp in the block)
        self.r_time = np.zeros(size, dtype=np.int32)      # when they read it (each its latest read), while all alike
        self.r_mixed = np.zeros(size, dtype=bool)         # they read it at different times: r_each holds them
        self.r_each = np.zeros((size, self.per_block), dtype=np.int32)   # per reader, only where r_mixed: its time,
        self.r_each_pc = np.zeros((size, self.per_block), dtype=np.uint16)   # its instruction // 16
        self.r_each_lane = np.zeros((size, self.per_block), dtype=np.uint8)  # and its lane (for the message)
        self.r_thread = np.zeros(size, dtype=np.uint16)
        self.r_pc = np.zeros(size, dtype=np.uint16)
        self._shadow = True

    def _thread(self, byte: int, local) -> int:
        return byte // self.shared_bytes * self.padded + int(local)

    def _reader(self, byte: int, unordered: int) -> tuple:
        """(thread, pc, False) of the first warp in the mask `unordered` among `byte`'s readers: its own
        read where the readers read at different times (r_each_*), else the latest reader's
        instruction and lane (readers at one time: between the same synchronizations)."""
        warp = (unordered & -unordered).bit_length() - 1
        if self.r_mixed[byte]:
            lane, pc = int(self.r_each_lane[byte, warp]), int(self.r_each_pc[byte, warp])
        else:
            lane, pc = int(self.r_thread[byte]) % WARP, int(self.r_pc[byte])
        return self._thread(byte, warp * WARP + lane), pc * 16, False

    def _own(self, warps: np.ndarray) -> np.ndarray:
        return warps % self.per_block

    def _published(self, warp: int) -> np.ndarray:
        """Warp `warp`'s clock with its own entry now: what an arrive releases."""
        self.time += 1
        out = self.clock[warp].copy()
        out[warp % self.per_block] = self.time
        return out

    # ------------------------------------------------------------ synchronization
    def fence(self, warps: np.ndarray) -> np.ndarray:
        """A fence by `warps` (global indices): each one's clock with its own entry now -- the
        accesses a fence by it orders (bobc.sim.races: what its later atomics release)."""
        self.time += 1
        out = self.clock[warps].copy()
        out[np.arange(warps.size), self._own(warps)] = self.time
        return out

    def bar_arrive(self, block: int, barrier: int, warps) -> None:
        """BAR.ARV by `warps` (global warp indices) of `block`."""
        key = (block, barrier)
        held = self.arrived.get(key)
        for w in np.unique(warps).tolist():
            c = self._published(w)
            held = c if held is None else np.maximum(held, c)
        self.arrived[key] = held
        if self.carry is not None:
            self.carry.arrive(("bar", block, barrier), warps)

    def bar_complete(self, block: int, barrier: int | None, warps) -> None:
        """A barrier of `block` completes for `warps` (global warp indices of its waiters)."""
        warps = np.unique(warps)
        joined = self.clock[warps].max(axis=0)
        held = self.arrived.pop((block, barrier), None) if barrier is not None else None
        if held is not None:
            joined = np.maximum(joined, held)
        self.time += 1
        joined[self._own(warps)] = self.time
        self.clock[warps] = joined
        if self.logged:
            self._log(block, int((np.uint64(1) << self._own(warps).astype(np.uint64)).sum()), joined)
        if self.carry is not None:
            self.carry.complete(("bar", block, barrier) if barrier is not None else None, warps)

    def mbar_init(self, block: int, offset: int) -> None:
        self.phase.pop((block, offset), None)
        self.completed.pop((block, offset), None)
        if self.carry is not None:
            self.carry.drop(("mbar", block, offset))
            self.carry.drop(("mbar done", block, offset))

    def mbar_arrive(self, block: int, offset: int, warp: int) -> None:
        key = (block, offset)
        c = self._published(warp)
        held = self.phase.get(key)
        self.phase[key] = c if held is None else np.maximum(held, c)
        if self.carry is not None:
            self.carry.arrive(("mbar", block, offset), [warp])

    def mbar_complete(self, block: int, offset: int) -> None:
        """The open phase completed: what a wait that sees it acquires."""
        key = (block, offset)
        held = self.phase.pop(key, None)
        self.completed[key] = held if held is not None else np.zeros(self.per_block, dtype=np.int64)
        if self.carry is not None:
            self.carry.move(("mbar", block, offset), ("mbar done", block, offset))

    def mbar_acquire(self, block: int, offset: int, warp: int) -> None:
        held = self.completed.get((block, offset))
        if held is not None:
            joined = np.maximum(self.clock[warp], held)
            if self.logged and not np.array_equal(joined, self.clock[warp]):
                self.time += 1          # the warp's accesses from now on are the ones ordered after the phase
                self._log(block, 1 << (warp % self.per_block), joined)
            self.clock[warp] = joined
        if self.carry is not None:
            self.carry.complete(("mbar done", block, offset), [warp], keep=True)

    def _log(self, block: int, mask: int, row: np.ndarray) -> None:
        if not (row == self.time).all():
            self.log_rows_at.append(len(self.log_time))
            self.log_rows.extend(row.tolist())
        self.log_block.append(block)
        self.log_time.append(self.time)
        self.log_mask.append(mask)

    def ordered(self, blocks: np.ndarray, first: np.ndarray, first_time: np.ndarray,
                second: np.ndarray, second_time: np.ndarray) -> np.ndarray:
        """Whether each access of warp `first` (in its block) made at `first_time` happens before the
        access of warp `second` of the same block at `second_time` (`logged` launches): the second
        warp's clock then (its last change at or before that time) covers the first's time."""
        out = np.zeros(blocks.size, dtype=bool)
        if not len(self.log_time) or blocks.size == 0:
            return out
        ev_block = np.frombuffer(self.log_block, dtype=np.int64)
        ev_time = np.frombuffer(self.log_time, dtype=np.int64)
        ev_mask = np.frombuffer(self.log_mask, dtype=np.int64)
        keep = np.flatnonzero(np.isin(ev_block, np.unique(blocks)))
        if keep.size == 0:
            return out
        # one row per (event, warp it changed): key = the warp's global index
        bits = (ev_mask[keep, None] >> np.arange(self.per_block, dtype=np.int64)) & 1
        e, w = np.nonzero(bits)
        ev = keep[e]
        key = ev_block[ev] * self.per_block + w
        order = np.lexsort((ev_time[ev], key))
        key, times, ev = key[order], ev_time[ev][order], ev[order]
        scale = np.int64(self.time + 2)
        at = np.searchsorted(key * scale + times, (blocks.astype(np.int64) * self.per_block + second) * scale
                             + second_time, side="right") - 1
        found = (at >= 0) & (key[np.maximum(at, 0)] == blocks.astype(np.int64) * self.per_block + second)
        if not found.any():
            return out
        hit = np.flatnonzero(found)
        events = ev[at[hit]]
        known = ev_time[events].copy()            # a whole block's barrier: every entry its time
        if len(self.log_rows_at):
            rows_at = np.frombuffer(self.log_rows_at, dtype=np.int64)
            rows = np.frombuffer(self.log_rows, dtype=np.int64).reshape(-1, self.per_block)
            r = np.minimum(np.searchsorted(rows_at, events), rows_at.size - 1)
            kept = rows_at[r] == events
            known[kept] = rows[r[kept], first[hit[kept]].astype(np.int64)]
        out[hit] = known > first_time[hit]
        return out

    # ------------------------------------------------------------ accesses
    def forget(self, index: np.ndarray) -> None:
        """Bytes an asynchronous copy wrote: their earlier accesses are no longer judged."""
        if self._shadow is None:
            return
        self.w_warp[index] = 0
        self.r_mask[index] = 0
        self.r_mixed[index] = False

    def access(self, index: np.ndarray, threads: np.ndarray, pc: int, writes: bool) -> WarpRace | None:
        """Plain accesses by `threads` to shared bytes `index` ([threads, size] or [threads]: the
        bytes each touches); the first race they make, or None."""
        if index.size == 0:
            return None
        if self._shadow is None:
            self._make_shadow(self.shared_bytes * (self.warps // self.per_block))
        size = index.shape[1] if index.ndim == 2 else 1
        index = index.reshape(-1)
        threads = np.repeat(threads, size) if size > 1 else threads
        warps = threads // WARP
        own = self._own(warps)
        # an earlier store by another warp that this warp is not ordered after
        w = self.w_warp[index].astype(np.int64) - 1
        other = (w >= 0) & (w != own)
        if other.any():
            k = np.flatnonzero(other)
            bad = self.clock[warps[k], w[k]] <= self.w_time[index[k]]
            if bad.any():
                i = int(k[np.argmax(bad)])
                b = int(index[i])
                return WarpRace(b, (self._thread(b, self.w_thread[b]), int(self.w_pc[b]) * 16, True), (int(threads[i]), pc, writes))
        if writes:
            bit = (np.uint32(1) << own.astype(np.uint32))
            readers = self.r_mask[index] & ~bit
            if readers.any():
                k = np.flatnonzero(readers)
                times = np.repeat(self.r_time[index[k]][:, None], self.per_block, axis=1)   # [k, warps of the block]
                mixed = self.r_mixed[index[k]]
                if mixed.any():
                    times[mixed] = self.r_each[index[k[mixed]]]
                ordered = self.clock[warps[k]] > times
                ok = (ordered.astype(np.uint64) << np.arange(self.per_block, dtype=np.uint64)).sum(axis=1)
                unordered = readers[k].astype(np.uint64) & ~ok
                bad = unordered != 0
                if bad.any():
                    j = int(np.argmax(bad))
                    i = int(k[j])
                    b = int(index[i])
                    return WarpRace(b, self._reader(b, int(unordered[j])), (int(threads[i]), pc, True))
            # two warps storing to one byte in this one instruction
            if warps.size > WARP:
                order = np.argsort(index, kind="stable")
                same = (index[order][1:] == index[order][:-1]) & (warps[order][1:] != warps[order][:-1])
                if same.any():
                    j = int(np.argmax(same))
                    a, c = int(order[j]), int(order[j + 1])
                    return WarpRace(int(index[a]), (int(threads[a]), pc, True), (int(threads[c]), pc, True))
            self.w_warp[index] = (own + 1).astype(np.uint8)
            self.w_time[index] = self.time
            self.w_thread[index] = threads % self.padded
            self.w_pc[index] = pc // 16
            self.r_mask[index] = 0
            self.r_mixed[index] = False
        else:
            bit = np.uint32(1) << own.astype(np.uint32)
            # readers before this one that read at another time: keep each reader's time apart
            mixed = self.r_mixed[index] | (((self.r_mask[index] & ~bit) != 0) & (self.r_time[index] != self.time))
            if mixed.any():
                m = index[mixed]
                fresh = np.unique(m[~self.r_mixed[m]])
                if fresh.size:          # the readers so far all read at r_time, in instruction r_pc
                    held = (self.r_mask[fresh][:, None] >> np.arange(self.per_block, dtype=np.uint32)) & 1
                    self.r_each[fresh] = np.where(held != 0, self.r_time[fresh][:, None], 0)
                    self.r_each_pc[fresh] = self.r_pc[fresh][:, None]
                    self.r_each_lane[fresh] = self.r_thread[fresh][:, None] % WARP
                self.r_each[m, own[mixed]] = self.time
                self.r_each_pc[m, own[mixed]] = pc // 16
                self.r_each_lane[m, own[mixed]] = threads[mixed] % WARP
                self.r_mixed[m] = True
            np.bitwise_or.at(self.r_mask, index, bit)
            self.r_time[index] = self.time
            self.r_thread[index] = threads % self.padded
            self.r_pc[index] = pc // 16
        return None
