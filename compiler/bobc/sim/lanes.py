"""Races within a warp: lanes of one plain store instruction writing different values to one byte.

The PTX memory model (PTX ISA, "Memory Consistency Model") is one of threads, and the lanes of a
warp are threads: two lanes' weak stores to one location conflict, and no causality order relates
the lanes of one instruction, so they form a data race; a later read returns the value of one of
the racing writes.  CUDA's programming guide says the same of a warp's store ("If a non-atomic
instruction executed by a warp writes to the same location in global or shared memory for more
than one of the threads of the warp, ... which thread performs the final write is undefined").
The simulator applies a store's lanes in order (the highest lane's bytes win), so such a kernel
gives one answer here and an unspecified one on the GPU.

What is refused: two lanes of one warp, both executing one STG / STS, whose bytes overlap with
different values.  What passes: lanes storing the same bytes (whichever lane's write lands, memory
holds the same value -- the outcome is deterministic, as the PTX model's "one of the racing writes"
allows only that value), atomics (never racing with each other), and lanes of different warps or
blocks (bobc.sim.warps and bobc.sim.races judge those, whatever the values).

Across instructions (Divergence, below): two accesses to one shared byte by lanes of the warp, one
a store -- a load of another lane's store, a store to bytes another lane loaded, a store of other
values than another lane stored --, where a branch sent the two different ways before the first
access and nothing since made them wait for each other -- on sm_70 and later the two paths run in
either order.  Global memory the same way (Divergence.global_access: a log of the accesses of
warps with branches remembered, sorted by 16-byte granule).  Lanes issuing one instruction
together are taken to be ordered in program order (ptxas compiles a converged __syncwarp to a NOP,
so SASS cannot hold a kernel to the PTX rule; docs/simulator.md, "Races within a warp").
"""
from __future__ import annotations

from typing import NamedTuple

import numpy as np

WARP = 32


class LaneRace(NamedTuple):
    """Two accesses to one shared byte by lanes of one warp that a branch parted: `kind` is
    "store-load", "load-store" or "store-store" (the first access, then the second); `first` /
    `second` the threads, `first_pc` the first's instruction (`more`: later loads of the byte by the
    first's lanes joined it), `byte` the launch's shared byte, `branch` the pc of the branch."""
    kind: str
    first: int
    first_pc: int
    more: bool
    second: int
    byte: int
    branch: int
    values: tuple[int, int] | None = None     # store-store: the byte's two values


def first_clash(addresses: np.ndarray, data: np.ndarray, mask) -> tuple[int, int] | None:
    """Two lanes (indices into the arrays) of one warp whose stores of `data` ([n, size] bytes, one
    row a lane) at byte `addresses` (naturally aligned, one size: they overlap exactly where they
    start alike) touch the same bytes with different values; the first such pair, or None.
    `mask`: the executing threads (True: all; else a bool per thread, n of them set; a thread's
    column // 32 is its warp)."""
    n = addresses.size
    if n < 2:
        return None
    addresses = addresses.astype(np.uint64, copy=False)
    if (addresses[1:] > addresses[:-1]).all():      # a coalesced store: every lane its own bytes
        return None
    warps = (np.arange(n, dtype=np.int64) if mask is True else np.flatnonzero(mask)) // WARP
    order = np.lexsort((addresses, warps))
    a, w = addresses[order], warps[order]
    same = (a[1:] == a[:-1]) & (w[1:] == w[:-1])
    if not same.any():
        return None
    rows = np.ascontiguousarray(data).reshape(n, -1)[order]
    differ = same & (rows[1:] != rows[:-1]).any(axis=1)
    if not differ.any():
        return None
    k = int(np.argmax(differ))
    first, second = sorted((int(order[k]), int(order[k + 1])))
    return first, second


# ----------------------------------------------------------------- lanes across instructions
# Instructions after which the simulator no longer judges a warp's diverged lanes against each
# other (Divergence.sync): what makes lanes wait for each other or reconverge (BSYNC, WARPSYNC --
# ptxas's divergent-path __syncwarp --, BAR, the convergence checks BRA.DIV / BRA.CONV, warp
# collectives), what orders memory some other way (fences, atomics, mbarriers, the cluster
# barrier, asynchronous copies), calls and returns (ptxas calls its warpsync helper), and NOP
# (ptxas's converged __syncwarp: facts in docs/simulator.md, "Races within a warp").  Conservative:
# each one forgets the warp's divergence, so it can only make the check refuse less.
SYNC_OPCODES = frozenset({
    "BSSY", "BSYNC", "WARPSYNC", "BAR", "NOP", "YIELD", "NANOSLEEP", "CALL", "RET",
    "MEMBAR", "FENCE", "ERRBAR", "CCTL", "CGAERRBAR", "UCGABAR_ARV", "UCGABAR_WAIT",
    "ATOM", "ATOMG", "ATOMS", "RED", "REDG", "SYNCS", "ARRIVES",
    "VOTE", "VOTEU", "SHFL", "MATCH", "REDUX", "ELECT",
    "LDGSTS", "LDGDEPBAR", "DEPBAR", "UTMALDG", "UBLKCP", "UTMASTG", "WARPGROUP"})
EVENTS = 8        # splits remembered per warp between syncs; one more forgets the warp's (conservative)


def _bits(mask: np.ndarray) -> np.ndarray:
    """One uint32 per warp: bit l set where lane l of the [threads] bool mask is."""
    return np.packbits(mask.reshape(-1, WARP), axis=1, bitorder="little").view("<u4").reshape(-1)


class Divergence:
    """Lanes of one warp on different paths, and two accesses to one shared byte by two such lanes,
    one a store, with nothing between that makes them wait for each other (docs/simulator.md, "Races
    within a warp").

    Per warp, the divergent branches since its last synchronization (SYNC_OPCODES) or joint issue
    of lanes on different sides: (step, pc, taken lanes, other lanes).  Two lanes are apart since a
    step where one branch sent them different ways.  Per shared byte, the last store by a lane of a
    warp with such branches (thread + 1, step, pc, the byte's value) and the loads by lanes of such
    a warp (warp + 1, the lanes, the first load's step and pc; zero-filled: untouched pages cost
    nothing).  An access by lane b of a byte lane a accessed at step t1, one of the two a store,
    races where a and b were apart since a step before t1: they were on different paths at the
    first access, and since the branch neither path has issued an instruction with the other or
    synchronized, so on a GPU with independent thread scheduling (sm_70 and later) the second may
    run before the first.  Two stores of one value to a byte do not race (either leaves it)."""

    def __init__(self, threads: int, shared_total: int):
        self.warps = threads // WARP
        self.shared_total = shared_total
        self.active = False                 # some warp has a divergent branch remembered
        self.count = None                   # [warps] branches remembered
        self.step = self.pc = self.taken = self.other = None    # [warps, EVENTS]
        self.store_thread = self.store_step = self.store_pc = self.store_value = None
        self.load_warp = self.load_lanes = self.load_step = self.load_pc = self.load_more = None
        self.global_stores = self.global_loads = None      # _Log: global accesses (below)
        self.bssy: dict[tuple[int, int], int] = {}     # (warp, B register): the lanes its last BSSY recorded

    def _make(self) -> None:
        if self.count is None:
            self.count = np.zeros(self.warps, dtype=np.int64)
            self.step = np.zeros((self.warps, EVENTS), dtype=np.int64)
            self.pc = np.zeros((self.warps, EVENTS), dtype=np.int64)
            self.taken = np.zeros((self.warps, EVENTS), dtype=np.uint32)
            self.other = np.zeros((self.warps, EVENTS), dtype=np.uint32)

    def _forget(self, warps) -> None:
        self.count[warps] = 0
        self.taken[warps] = 0
        self.other[warps] = 0
        self.active = bool(self.count.any())
        if not self.active:
            self.bssy.clear()
        elif self.bssy:
            gone = set(np.arange(self.warps)[warps].tolist())
            self.bssy = {key: lanes for key, lanes in self.bssy.items() if key[0] not in gone}

    def _join(self, warps: np.ndarray, lanes: np.ndarray) -> None:
        """`lanes` (a uint32 per warp of `warps`) are ordered with each other from now on: forget every
        branch that sent some of them one way and some the other (all of its pairs: conservative)."""
        lanes = lanes[:, None]
        straddle = ((lanes & self.taken[warps]) != 0) & ((lanes & self.other[warps]) != 0)
        if straddle.any():
            taken, other = self.taken[warps], self.other[warps]
            taken[straddle] = 0
            other[straddle] = 0
            self.taken[warps], self.other[warps] = taken, other

    def converged(self) -> None:
        """Every live thread issues one instruction: no lanes are apart any more."""
        if self.active:
            self._forget(slice(None))

    def issue(self, at: np.ndarray, ins) -> None:
        """The `at` threads issue instruction `ins` together.  Lanes apart that issue it together are
        no longer judged against each other (the branches that parted them are forgotten); a BSYNC
        does the same for the lanes its BSSY recorded; any other synchronizing instruction
        (SYNC_OPCODES, a BRA.DIV / BRA.CONV, a strong or MMIO access) forgets its warps' branches."""
        if not self.active:
            return
        together = _bits(at)
        warps = np.flatnonzero((self.count > 0) & (together != 0))
        if warps.size == 0:
            return
        op, mods = ins.opcode, ins.modifiers
        barrier = next((x.index for x in ins.operands if x.kind == "breg"), None)
        lanes = together[warps]
        if op == "BSSY" and barrier is not None:
            # the lanes a later BSYNC on this register waits for (recorded while the warp is judged)
            for w, mask in zip(warps.tolist(), lanes.tolist()):
                self.bssy[(w, barrier)] = mask
            return
        if op == "BSYNC" and barrier is not None:
            recorded = [self.bssy.get((w, barrier)) for w in warps.tolist()]
            unknown = np.array([r is None for r in recorded])
            if unknown.any():
                self._forget(warps[unknown])
            known = ~unknown
            if known.any():
                extra = np.array([r for r in recorded if r is not None], dtype=np.uint32)
                self._join(warps[known], lanes[known] | extra)
            return
        if (op in SYNC_OPCODES or (op.startswith("U") and op[1:] in SYNC_OPCODES)
                or (op == "BRA" and bool({"DIV", "CONV"} & set(mods)))
                or bool({"STRONG", "MMIO", "VOLATILE"} & set(mods))):
            self._forget(warps)
            return
        self._join(warps, lanes)

    def split(self, at: np.ndarray, taken: np.ndarray, step: int, pc: int) -> None:
        """A branch issued by the `at` threads sent the `taken` ones to its target, the others on."""
        t, n = _bits(at & taken), _bits(at & ~taken)
        warps = np.flatnonzero((t != 0) & (n != 0))
        if warps.size == 0:
            return
        self._make()
        full = warps[self.count[warps] >= EVENTS]
        if full.size:
            self._forget(full)
        k = self.count[warps]
        self.step[warps, k], self.pc[warps, k] = step, pc
        self.taken[warps, k], self.other[warps, k] = t[warps], n[warps]
        self.count[warps] += 1
        self.active = True

    def _parted(self, w: np.ndarray, lane: np.ndarray, others: np.ndarray, before: np.ndarray):
        """Per row: the lanes of `others` (a uint32 mask) that a remembered branch of warp `w` taken
        before step `before` sent the other way from `lane`, with nothing since joining them: [rows,
        EVENTS] uint32, one column a branch."""
        bit = (np.uint32(1) << (lane % WARP).astype(np.uint32))[:, None]
        taken, other = self.taken[w], self.other[w]
        opposite = np.where((taken & bit) != 0, other, np.where((other & bit) != 0, taken, np.uint32(0)))
        return opposite & others.astype(np.uint32)[:, None] & \
            np.where(self.step[w] < before[:, None], np.uint32(0xFFFFFFFF), np.uint32(0))

    def _race(self, kind, first, first_pc, more, second, byte, w, branches, values=None) -> LaneRace:
        k = int(np.argmax(branches != 0))
        return LaneRace(kind, int(first), int(first_pc), bool(more), int(second), int(byte), int(self.pc[w, k]), values)

    def store(self, index: np.ndarray, threads: np.ndarray, data: np.ndarray, step: int, pc: int):
        """A plain shared store by `threads` of `data` ([threads, bytes] uint8) to the bytes `index`
        ([threads, bytes]), before it is applied.  The first race with an earlier access by a lane
        another path holds (a load of those bytes: "load-store"; a store of other values to them:
        "store-store"), or None, and then the store is recorded."""
        if not self.active:
            return None
        keep = self.count[threads // WARP] > 0
        if not keep.any():
            return None
        where, writers, data = index[keep], threads[keep], data[keep]
        shape = where.shape
        if self.load_lanes is not None:
            b = np.broadcast_to(writers[:, None], shape)
            w = b // WARP
            lanes = np.where(self.load_warp[where] == w + 1, self.load_lanes[where], np.uint32(0)) & \
                ~(np.uint32(1) << (b % WARP).astype(np.uint32))
            rows, cols = np.nonzero(lanes)
            if rows.size:
                byte = where[rows, cols]
                parted = self._parted(w[rows, cols], b[rows, cols], lanes[rows, cols], self.load_step[byte])
                bad = parted.any(axis=1)
                if bad.any():
                    i = int(np.argmax(bad))
                    readers = np.bitwise_or.reduce(parted[i])
                    reader = int(w[rows[i], cols[i]]) * WARP + _lowest(int(readers))
                    return self._race("load-store", reader, self.load_pc[byte[i]], self.load_more[byte[i]],
                                      b[rows[i], cols[i]], byte[i], w[rows[i], cols[i]], parted[i])
        if self.store_thread is not None:
            b = np.broadcast_to(writers[:, None], shape)
            writer = self.store_thread[where].astype(np.int64) - 1
            candidate = (writer >= 0) & (writer != b) & (writer // WARP == b // WARP) & (self.store_value[where] != data)
            rows, cols = np.nonzero(candidate)
            if rows.size:
                a, second, byte = writer[rows, cols], b[rows, cols], where[rows, cols]
                parted = self._parted(second // WARP, a, np.uint32(1) << (second % WARP).astype(np.uint32),
                                      self.store_step[byte])
                bad = parted.any(axis=1)
                if bad.any():
                    i = int(np.argmax(bad))
                    values = (int(self.store_value[byte[i]]), int(data[rows[i], cols[i]]))
                    return self._race("store-store", a[i], self.store_pc[byte[i]], False, second[i], byte[i],
                                      second[i] // WARP, parted[i], values)
        if self.store_thread is None:
            self.store_thread = np.zeros(self.shared_total, dtype=np.int32)
            self.store_step = np.zeros(self.shared_total, dtype=np.int64)
            self.store_pc = np.zeros(self.shared_total, dtype=np.int32)
            self.store_value = np.zeros(self.shared_total, dtype=np.uint8)
        self.store_thread[where] = (writers + 1)[:, None]
        self.store_step[where] = step
        self.store_pc[where] = pc
        self.store_value[where] = data
        return None

    def loaded(self, index: np.ndarray, threads: np.ndarray, step: int, pc: int):
        """A plain shared load by `threads` of the bytes `index` ([threads, bytes]): the first race with
        an earlier store by a lane another path holds ("store-load"), or None, and then the load is
        recorded (the lanes of a warp loading a byte are kept together while a branch they may pair
        with is remembered: a later store by a lane of another path races with any of them)."""
        if not self.active:
            return None
        keep = self.count[threads // WARP] > 0
        if not keep.any():
            return None
        where, readers = index[keep], np.broadcast_to(threads[keep][:, None], index[keep].shape)
        if self.store_thread is not None:
            writer = self.store_thread[where].astype(np.int64) - 1
            candidate = (writer >= 0) & (writer != readers) & (writer // WARP == readers // WARP)
            rows, cols = np.nonzero(candidate)
            if rows.size:
                a, b, byte = writer[rows, cols], readers[rows, cols], where[rows, cols]
                parted = self._parted(b // WARP, a, np.uint32(1) << (b % WARP).astype(np.uint32), self.store_step[byte])
                bad = parted.any(axis=1)
                if bad.any():
                    i = int(np.argmax(bad))
                    return self._race("store-load", a[i], self.store_pc[byte[i]], False, b[i], byte[i],
                                      b[i] // WARP, parted[i])
        if self.load_lanes is None:
            self.load_warp = np.zeros(self.shared_total, dtype=np.int32)
            self.load_lanes = np.zeros(self.shared_total, dtype=np.uint32)
            self.load_step = np.zeros(self.shared_total, dtype=np.int64)
            self.load_pc = np.zeros(self.shared_total, dtype=np.int32)
            self.load_more = np.zeros(self.shared_total, dtype=bool)
        flat, who = where.reshape(-1), readers.reshape(-1)
        w = who // WARP
        # a byte's record goes on (lanes joined, its first step and pc kept) while it is this warp's and
        # some remembered branch predates it; else it starts again with this load
        fresh = (self.load_warp[flat] != w + 1) | (self.load_step[flat] <= self.step[w, 0])
        again = flat[fresh]
        self.load_warp[again] = (w[fresh] + 1).astype(np.int32)
        self.load_lanes[again] = 0
        self.load_step[again] = step
        self.load_pc[again] = pc
        self.load_more[again] = False
        self.load_more[flat[~fresh]] |= self.load_pc[flat[~fresh]] != pc
        np.bitwise_or.at(self.load_lanes, flat, np.uint32(1) << (who % WARP).astype(np.uint32))
        return None

    def global_access(self, starts, size, threads, data, step, pc):
        """Plain global accesses (loads: `data` None) by `threads` at byte addresses `starts` (naturally
        aligned, `size` bytes each), after they are applied: the first race with an earlier access by a
        lane of the warp another path holds (as for shared bytes: a load of its store, a store to bytes it
        loaded, a store of other values than it stored), or None, and then the accesses are recorded."""
        if not self.active:
            return None
        keep = self.count[threads // WARP] > 0
        if not keep.any():
            return None
        starts = starts.astype(np.uint64)[keep]
        threads = threads[keep]
        if data is not None:
            data = np.ascontiguousarray(data).view(np.uint8).reshape(keep.size, size)[keep]
        gran = starts // np.uint64(GRANULE)
        offset = (starts % np.uint64(GRANULE)).astype(np.int64)
        mask = ((np.uint32(1) << np.uint32(size)) - np.uint32(1)).astype(np.uint32) << offset.astype(np.uint32)
        values = None
        if data is not None:
            values = np.zeros((threads.size, GRANULE), dtype=np.uint8)
            rows = np.arange(threads.size)[:, None]
            values[rows, offset[:, None] + np.arange(size)] = data
        logs = [(self.global_stores, "store-store" if data is not None else "store-load")]
        if data is not None:
            logs.append((self.global_loads, "load-store"))
        for log, kind in logs:
            if log is None or not len(log):
                continue
            found = log.pairs(gran)
            if found is None:
                continue
            rep, idx = found
            a, b = log.thread[idx], threads[rep]
            overlap = log.mask[idx] & mask[rep]
            candidate = (a != b) & (a // WARP == b // WARP) & (overlap != 0)
            if kind == "store-store":
                bits = ((overlap[:, None] >> np.arange(GRANULE, dtype=np.uint32)) & 1).astype(bool)
                differ = (log.values[idx] != values[rep]) & bits
                overlap = np.packbits(differ, axis=1, bitorder="little").view("<u2").reshape(-1).astype(np.uint32)
                candidate &= overlap != 0
            if not candidate.any():
                continue
            sel = np.flatnonzero(candidate)
            a, b, idx, rep, overlap = a[sel], b[sel], idx[sel], rep[sel], overlap[sel]
            parted = self._parted(b // WARP, a, np.uint32(1) << (b % WARP).astype(np.uint32), log.step[idx])
            bad = parted.any(axis=1)
            if not bad.any():
                continue
            i = int(np.argmax(bad))
            place = int(gran[rep[i]]) * GRANULE + _lowest(int(overlap[i]))
            vals = None
            if kind == "store-store":
                k = place % GRANULE
                vals = (int(log.values[idx[i], k]), int(values[rep[i], k]))
            return self._race(kind, a[i], log.pc[idx[i]], False, b[i], place, int(b[i]) // WARP, parted[i], vals)
        # record
        if data is not None:
            if self.global_stores is None:
                self.global_stores = _Log(True)
            log = self.global_stores
        else:
            if self.global_loads is None:
                self.global_loads = _Log(False)
            log = self.global_loads
        if len(log) + threads.size > LOG_ROWS:
            w = log.thread // WARP
            log.keep((self.count[w] > 0) & (log.step > self.step[w, 0]))
            if len(log) + threads.size > LOG_ROWS:
                log.keep(np.zeros(len(log), dtype=bool))
        log.add(gran, mask, threads, step, pc, values)
        return None


def _lowest(mask: int) -> int:
    return (mask & -mask).bit_length() - 1


# ----------------------------------------------------------------- global memory across instructions
GRANULE = 16          # a naturally aligned access of at most 16 bytes lies in one 16-byte granule
LOG_ROWS = 1 << 18    # global accesses a launch keeps (more: the stale ones dropped, then all: conservative)


class _Log:
    """Global accesses by lanes of warps with branches remembered, sorted by granule: the granule, the
    bytes of it accessed (a 16-bit mask), the thread, step and pc, and for stores the bytes' values
    (16 a row, at their places in the granule)."""

    def __init__(self, stores: bool):
        self.stores = stores
        self.gran = np.zeros(0, dtype=np.uint64)
        self.mask = np.zeros(0, dtype=np.uint32)
        self.thread = np.zeros(0, dtype=np.int64)
        self.step = np.zeros(0, dtype=np.int64)
        self.pc = np.zeros(0, dtype=np.int32)
        self.values = np.zeros((0, GRANULE), dtype=np.uint8)

    def __len__(self) -> int:
        return self.gran.size

    def add(self, gran, mask, thread, step, pc, values) -> None:
        order = np.argsort(gran, kind="stable")
        gran = gran[order]
        at = np.searchsorted(self.gran, gran, side="right")
        self.gran = np.insert(self.gran, at, gran)
        self.mask = np.insert(self.mask, at, mask[order])
        self.thread = np.insert(self.thread, at, thread[order])
        self.step = np.insert(self.step, at, np.full(gran.size, step, dtype=np.int64))
        self.pc = np.insert(self.pc, at, np.full(gran.size, pc, dtype=np.int32))
        if self.stores:
            self.values = np.insert(self.values, at, values[order], axis=0)

    def keep(self, rows: np.ndarray) -> None:
        self.gran, self.mask, self.thread = self.gran[rows], self.mask[rows], self.thread[rows]
        self.step, self.pc = self.step[rows], self.pc[rows]
        if self.stores:
            self.values = self.values[rows]

    def pairs(self, gran: np.ndarray):
        """(new row, log row) for every log row in a new row's granule."""
        lo = np.searchsorted(self.gran, gran, side="left")
        counts = np.searchsorted(self.gran, gran, side="right") - lo
        total = int(counts.sum())
        if total == 0:
            return None
        rep = np.repeat(np.arange(gran.size), counts)
        idx = np.arange(total) - np.repeat(np.cumsum(counts) - counts, counts) + np.repeat(lo, counts)
        return rep, idx
