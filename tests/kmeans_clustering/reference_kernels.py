"""KMeans's kernels in NumPy for `bobc run ... --reference` (docs/host-steps.md, "Reference kernels"):
each reads its launch's words as the SASS kernel of the same identity does and computes in binary32 in
the kernel's order (MUFU.RCP from binary64, rounded to binary32: docs/simulator.md)."""
from __future__ import annotations

import numpy as np


def _pair(launch, word):
    v = launch.word(word)
    return v & 0xFFFFFFFF, v >> 32


def assign(memory, launch):
    """0 X, 1 C, 2 A (written), 3 inertia (written), 4 N|D, 5 K."""
    n, d = _pair(launch, 4)
    k = launch.word(5) & 0xFFFFFFFF
    X = memory.array(launch.word(0), "<f4", n * d).reshape(n, d)
    C = memory.array(launch.word(1), "<f4", k * d).reshape(k, d)
    best = np.full(n, np.inf, np.float32)
    index = np.zeros(n, np.uint32)
    for c in range(k):
        dist = np.zeros(n, np.float32)
        for j in range(d):
            t = X[:, j] - C[c, j]
            dist = dist + t * t
        nearer = dist < best
        best = np.where(nearer, dist, best)
        index = np.where(nearer, np.uint32(c), index)
    memory.array(launch.word(2), "<u4", n)[:] = index
    v = np.zeros(64, np.float32)                   # the block's 64 threads; past N add 0
    v[:n] = best
    v = v.reshape(2, 32)
    for s in (16, 8, 4, 2, 1):                      # SHFL.DOWN: lane l adds lane l + s
        v[:, :s] = v[:, :s] + v[:, s:2 * s]
    memory.array(launch.word(3), "<f4", 1)[:] = np.float32(v[0, 0] + v[1, 0])


def update(memory, launch):
    """0 X, 1 A, 2 C (rows written), 3 N|D, 4 K."""
    n, d = _pair(launch, 3)
    k = launch.word(4) & 0xFFFFFFFF
    X = memory.array(launch.word(0), "<f4", n * d).reshape(n, d)
    A = memory.array(launch.word(1), "<u4", n)
    C = memory.array(launch.word(2), "<f4", k * d).reshape(k, d)
    for c in range(k):
        mine = np.flatnonzero(A == c)
        if mine.size == 0:
            continue
        total = np.zeros(d, np.float32)
        for i in mine:
            total = total + X[i]
        rcp = np.float32(1.0 / np.float64(np.float32(mine.size)))
        C[c] = total * rcp


KERNELS = {"kmeans-assign": assign, "kmeans-update": update}
