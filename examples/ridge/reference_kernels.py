"""Ridge's kernels in NumPy (float32, each product and sum rounded, kernel order)."""
import numpy as np


def _pair_u32(launch, i):
    v = launch.word(i)
    return v & 0xFFFFFFFF, v >> 32


def _pair_f32(launch, i):
    return np.frombuffer(launch.word(i).to_bytes(8, "little"), "<f4")


def _predict(W, X):
    p = np.full(X.shape[0], W[-1], np.float32)
    for k in range(X.shape[1]):
        p = p + W[k] * X[:, k]
    return p


def grad(memory, launch):
    n, d = _pair_u32(launch, 5)
    two_over_n, one_over_n = _pair_f32(launch, 6)
    two_lam, lam = _pair_f32(launch, 7)
    W = memory.array(launch.word(0), "<f4", d + 1).copy()
    X = memory.array(launch.word(1), "<f4", n * d).reshape(n, d)
    y = memory.array(launch.word(2), "<f4", n)
    r = _predict(W, X) - y
    Xb = np.concatenate([X, np.ones((n, 1), np.float32)], axis=1)
    G = np.zeros(d + 1, np.float32)
    sq = np.float32(0)
    for i in range(n):
        G = G + r[i] * Xb[i]
        sq = np.float32(sq + r[i] * r[i])
    G = G * two_over_n
    G[:d] = G[:d] + W[:d] * two_lam
    pen = np.float32(0)
    for k in range(d):
        pen = np.float32(pen + W[k] * W[k])
    memory.array(launch.word(3), "<f4", d + 1)[:] = G
    memory.array(launch.word(4), "<f4", 1)[:] = np.float32(sq * one_over_n) + np.float32(pen * lam)


def momentum(memory, launch):
    count, _ = _pair_u32(launch, 3)
    lr = _pair_f32(launch, 3)[1]
    mu = _pair_f32(launch, 4)[0]
    W = memory.array(launch.word(0), "<f4", count)
    V = memory.array(launch.word(1), "<f4", count)
    G = memory.array(launch.word(2), "<f4", count)
    V[:] = mu * V + G
    W[:] = W - lr * V


def predict(memory, launch):
    n, d = _pair_u32(launch, 3)
    W = memory.array(launch.word(0), "<f4", d + 1)
    X = memory.array(launch.word(1), "<f4", n * d).reshape(n, d)
    memory.array(launch.word(2), "<f4", n)[:] = _predict(W, X)


KERNELS = {"ridge-grad": grad, "ridge-momentum": momentum, "ridge-predict": predict}
