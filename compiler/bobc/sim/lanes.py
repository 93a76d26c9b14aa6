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

Not judged here: lanes of one warp across instructions (one lane's store and another lane's later
access, with or without a WARPSYNC between): the warp is one thread of bobc.sim.warps' order
(docs/simulator.md, "Races within a warp").
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
