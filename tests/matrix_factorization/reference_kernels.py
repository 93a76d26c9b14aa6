"""MatFac's kernels in NumPy for `bobc run ... --reference` (docs/host-steps.md, "Reference
kernels"): each reads its launch's parameter words as the SASS kernel of the same region identity
does and computes in binary32, every product and sum rounded separately in the kernel's order.
mf-grad's atomics are added in thread order (triple 0 first), the order the simulator applies
them in (docs/simulator.md, "Limits"); a GPU adds them in whatever order they land."""
from __future__ import annotations

import numpy as np

f32 = np.float32


def _pair(launch, word):
    v = launch.word(word)
    return v & 0xFFFFFFFF, v >> 32


def _binary32s(launch, word):
    return np.frombuffer(launch.word(word).to_bytes(8, "little"), "<f4")


def zero(memory, launch):
    """0 G (written), 1 the loss (written), 2 count."""
    count, _ = _pair(launch, 2)
    memory.array(launch.word(0), "<f4", count)[:] = 0
    memory.array(launch.word(1), "<f4", 1)[:] = 0


def grad(memory, launch):
    """0 U, 1 V, 2 bu, 3 bi, 4 gU, 5 gV, 6 gbu, 7 gbi, 8 users, 9 items, 10 ratings,
    11 predictions (written), 12 B|K, 13 NU|NI, 14 2/B|1/B, 15 the loss (added to)."""
    b_count, k_count = _pair(launch, 12)
    nu, ni = _pair(launch, 13)
    two_over_b, one_over_b = _binary32s(launch, 14)
    U = memory.array(launch.word(0), "<f4", nu * k_count).reshape(nu, k_count)
    V = memory.array(launch.word(1), "<f4", ni * k_count).reshape(ni, k_count)
    bu = memory.array(launch.word(2), "<f4", nu)
    bi = memory.array(launch.word(3), "<f4", ni)
    gU = memory.array(launch.word(4), "<f4", nu * k_count).reshape(nu, k_count)
    gV = memory.array(launch.word(5), "<f4", ni * k_count).reshape(ni, k_count)
    gbu = memory.array(launch.word(6), "<f4", nu)
    gbi = memory.array(launch.word(7), "<f4", ni)
    users = memory.array(launch.word(8), "<u4", b_count)
    items = memory.array(launch.word(9), "<u4", b_count)
    ratings = memory.array(launch.word(10), "<f4", b_count)
    predictions = memory.array(launch.word(11), "<f4", b_count)
    loss = memory.array(launch.word(15), "<f4", 1)
    for b in range(b_count):
        u, i = int(users[b]), int(items[b])
        p = f32(bu[u] + bi[i])
        for k in range(k_count):
            p = f32(p + f32(U[u, k] * V[i, k]))
        predictions[b] = p
        e = f32(p - ratings[b])
        g = f32(e * two_over_b)
        loss[0] = f32(loss[0] + f32(f32(e * e) * one_over_b))
        gbu[u] = f32(gbu[u] + g)
        gbi[i] = f32(gbi[i] + g)
        for k in range(k_count):
            gU[u, k] = f32(gU[u, k] + f32(g * V[i, k]))
            gV[i, k] = f32(gV[i, k] + f32(g * U[u, k]))


def sgd(memory, launch):
    """0 W (read-write), 1 G, 2 count|lr (binary32)."""
    count, _ = _pair(launch, 2)
    lr = _binary32s(launch, 2)[1]
    W = memory.array(launch.word(0), "<f4", count)
    G = memory.array(launch.word(1), "<f4", count)
    W[:] = W - lr * G


KERNELS = {"mf-zero": zero, "mf-grad": grad, "mf-sgd": sgd}
