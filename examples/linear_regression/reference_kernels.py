"""LinReg's kernels in NumPy for `bobc run ... --reference` (docs/host-steps.md,
"Reference kernels"): each reads its launch's parameter words as the SASS kernel
of the same region identity does, and computes in binary32 with every product and
sum rounded separately, in the kernel's order."""
from __future__ import annotations

import numpy as np


def _counts(launch, word):
    v = launch.word(word)
    return v & 0xFFFFFFFF, v >> 32


def _predict(W, X):
    p = np.full(X.shape[0], W[-1], np.float32)
    for k in range(X.shape[1]):
        p = p + W[k] * X[:, k]
    return p


def loss_grad(memory, launch):
    """0 W, 1 X, 2 y, 3 G (written), 4 loss (written), 5 N|D, 6 2/N|1/N (binary32)."""
    n, d = _counts(launch, 5)
    W = memory.array(launch.word(0), "<f4", d + 1)
    X = memory.array(launch.word(1), "<f4", n * d).reshape(n, d)
    y = memory.array(launch.word(2), "<f4", n)
    two_over_n, one_over_n = np.frombuffer(launch.word(6).to_bytes(8, "little"), "<f4")
    r = _predict(W, X) - y
    Xb = np.concatenate([X, np.ones((n, 1), np.float32)], axis=1)
    G = np.zeros(d + 1, np.float32)
    loss = np.float32(0)
    for i in range(n):
        G = G + r[i] * Xb[i]
        loss = np.float32(loss + r[i] * r[i])
    memory.array(launch.word(3), "<f4", d + 1)[:] = G * two_over_n
    memory.array(launch.word(4), "<f4", 1)[:] = np.float32(loss * one_over_n)


def sgd(memory, launch):
    """0 W (read-write), 1 G, 2 count|lr (binary32)."""
    count, lr_bits = _counts(launch, 2)
    lr = np.frombuffer(lr_bits.to_bytes(4, "little"), "<f4")[0]
    W = memory.array(launch.word(0), "<f4", count)
    G = memory.array(launch.word(1), "<f4", count)
    W[:] = W - lr * G


def predict(memory, launch):
    """0 W, 1 X, 2 predictions (written), 3 N|D."""
    n, d = _counts(launch, 3)
    W = memory.array(launch.word(0), "<f4", d + 1)
    X = memory.array(launch.word(1), "<f4", n * d).reshape(n, d)
    memory.array(launch.word(2), "<f4", n)[:] = _predict(W, X)


KERNELS = {
    "linreg-loss-grad": loss_grad,
    "linreg-sgd": sgd,
    "linreg-predict": predict,
}
