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

Across instructions (Divergence, below): a shared load of bytes another lane of the warp stored,
where a branch sent the two different ways before the store and nothing since made them wait for
each other -- on sm_70 and later the two paths run in either order.  Lanes issuing one instruction
together are taken to be ordered in program order (ptxas compiles a converged __syncwarp to a NOP,
so SASS cannot hold a kernel to the PTX rule; docs/simulator.md, "Races within a warp").
"""
from __future__ import annotations

import numpy as np

WARP = 32


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
    """Lanes of one warp on different paths, and one lane's shared store read by another such lane
    with nothing between that makes them wait for each other (docs/simulator.md, "Races within a
    warp").

    Per warp, the divergent branches since its last synchronization (SYNC_OPCODES) or joint issue
    of lanes on different sides: (step, pc, taken lanes, other lanes).  Two lanes are apart since a
    step where one branch sent them different ways.  Per shared byte, the last store by a lane of a
    warp with such branches (thread + 1, step, pc; zero-filled: untouched pages cost nothing).  A
    load by lane b of bytes lane a stored at step t1 races where a and b were apart since a step
    before t1: they were on different paths when a stored, and since the branch neither path has
    issued an instruction with the other or synchronized, so on a GPU with independent thread
    scheduling (sm_70 and later) the load may run before the store."""

    def __init__(self, threads: int, shared_total: int):
        self.warps = threads // WARP
        self.shared_total = shared_total
        self.active = False                 # some warp has a divergent branch remembered
        self.count = None                   # [warps] branches remembered
        self.step = self.pc = self.taken = self.other = None    # [warps, EVENTS]
        self.store_thread = self.store_step = self.store_pc = None
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

    def stored(self, index: np.ndarray, threads: np.ndarray, step: int, pc: int) -> None:
        """Plain shared stores by `threads` to the bytes `index` ([threads, bytes])."""
        if not self.active:
            return
        keep = self.count[threads // WARP] > 0
        if not keep.any():
            return
        if self.store_thread is None:
            self.store_thread = np.zeros(self.shared_total, dtype=np.int32)
            self.store_step = np.zeros(self.shared_total, dtype=np.int64)
            self.store_pc = np.zeros(self.shared_total, dtype=np.int32)
        where = index[keep]
        self.store_thread[where] = (threads[keep] + 1)[:, None]
        self.store_step[where] = step
        self.store_pc[where] = pc

    def loaded(self, index: np.ndarray, threads: np.ndarray):
        """A plain shared load by `threads` of the bytes `index` ([threads, bytes]): the first
        (storing thread, store pc, loading thread, byte, branch pc) whose store and load race, or
        None."""
        if not self.active or self.store_thread is None:
            return None
        keep = self.count[threads // WARP] > 0
        if not keep.any():
            return None
        where, readers = index[keep], np.broadcast_to(threads[keep][:, None], index[keep].shape)
        writer = self.store_thread[where].astype(np.int64) - 1
        candidate = (writer >= 0) & (writer != readers) & (writer // WARP == readers // WARP)
        if not candidate.any():
            return None
        rows, cols = np.nonzero(candidate)
        a, b, byte = writer[rows, cols], readers[rows, cols], where[rows, cols]
        t1, w = self.store_step[byte], b // WARP
        abit = (np.uint32(1) << (a % WARP).astype(np.uint32))[:, None]
        bbit = (np.uint32(1) << (b % WARP).astype(np.uint32))[:, None]
        taken, other = self.taken[w], self.other[w]
        apart = ((((taken & abit) != 0) & ((other & bbit) != 0)) | (((other & abit) != 0) & ((taken & bbit) != 0))) \
            & (self.step[w] < t1[:, None])
        bad = apart.any(axis=1)
        if not bad.any():
            return None
        i = int(np.argmax(bad))
        k = int(np.argmax(apart[i]))
        return int(a[i]), int(self.store_pc[byte[i]]), int(b[i]), int(byte[i]), int(self.pc[w[i], k])
