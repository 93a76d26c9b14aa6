"""Mlp's kernels in NumPy for `bobc run --reference`: binary32, every product and sum
rounded separately in the PTX's order; each MUFU (ex2, rcp, lg2) computed in float64 and
rounded to float32, a subnormal flushed where the unit flushes it (docs/writing-a-plan.md, section 2)."""
from __future__ import annotations

import numpy as np

F = np.float32
LOG2E = np.frombuffer((0x3FB8AA3B).to_bytes(4, "little"), "<f4")[0]
NEG_LN2 = np.frombuffer((0xBF317218).to_bytes(4, "little"), "<f4")[0]


def _halves(launch, i):
    v = launch.word(i)
    return v & 0xFFFFFFFF, v >> 32


def _f32_lo(launch, i):
    return np.frombuffer((launch.word(i) & 0xFFFFFFFF).to_bytes(4, "little"), "<f4")[0]


def _ex2(x):
    r = np.exp2(x.astype(np.float64)).astype(np.float32)
    return np.where(np.abs(r) < np.float32(2.0 ** -126), np.float32(0), r).astype(np.float32)


def _ftz(x):
    """A subnormal as a zero of its sign: the MUFU unit's rcp / lg2 .approx.ftz operands (docs/simulator.md)."""
    x = np.asarray(x, np.float32)
    return np.where(np.abs(x) < np.float32(2.0 ** -126), np.copysign(np.float32(0), x), x).astype(np.float32)


def _rcp(x):
    with np.errstate(divide="ignore", over="ignore"):
        return _ftz((1.0 / _ftz(x).astype(np.float64)).astype(np.float32))


def _lg2(x):
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.log2(_ftz(x).astype(np.float64)).astype(np.float32)


def _split(W, d, h, c):
    w1 = W[: d * h].reshape(d, h)
    b1 = W[d * h : d * h + h]
    w2 = W[d * h + h : d * h + h + h * c].reshape(h, c)
    b2 = W[d * h + h + h * c :]
    return w1, b1, w2, b2


def forward(memory, launch):
    n, d = _halves(launch, 6)
    h, c = _halves(launch, 7)
    inv_n = _f32_lo(launch, 8)
    W = memory.array(launch.word(0), "<f4", d * h + h + h * c + c)
    X = memory.array(launch.word(1), "<f4", n * d).reshape(n, d)
    y = memory.array(launch.word(2), "<u4", n).astype(np.int64)
    w1, b1, w2, b2 = _split(W, d, h, c)
    A = np.empty((n, h), F)
    for j in range(h):
        a = np.full(n, b1[j], F)
        for k in range(d):
            a = (a + (X[:, k] * w1[k, j]).astype(F)).astype(F)
        A[:, j] = np.maximum(a, F(0))
    Z = np.empty((n, c), F)
    for cc in range(c):
        z = np.full(n, b2[cc], F)
        for j in range(h):
            z = (z + (A[:, j] * w2[j, cc]).astype(F)).astype(F)
        Z[:, cc] = z
    m = np.full(n, -np.inf, F)
    for cc in range(c):
        m = np.maximum(m, Z[:, cc])
    E = np.empty((n, c), F)
    s = np.zeros(n, F)
    for cc in range(c):
        E[:, cc] = _ex2(((Z[:, cc] - m).astype(F) * LOG2E).astype(F))
        s = (s + E[:, cc]).astype(F)
    r = _rcp(s)
    P = (E * r[:, None]).astype(F)
    li = (_lg2(P[np.arange(n), y]) * NEG_LN2).astype(F)
    total = F(0)
    for i in range(n):
        total = F(total + li[i])
    memory.array(launch.word(3), "<f4", n * h)[:] = A.reshape(-1)
    memory.array(launch.word(4), "<f4", n * c)[:] = P.reshape(-1)
    memory.array(launch.word(5), "<f4", 1)[:] = F(total * inv_n)


def dlogits(memory, launch):
    n, d = _halves(launch, 6)
    h, c = _halves(launch, 7)
    inv_n = _f32_lo(launch, 8)
    W = memory.array(launch.word(0), "<f4", d * h + h + h * c + c)
    y = memory.array(launch.word(1), "<u4", n).astype(np.int64)
    P = memory.array(launch.word(2), "<f4", n * c).reshape(n, c)
    A = memory.array(launch.word(3), "<f4", n * h).reshape(n, h)
    _, _, w2, _ = _split(W, d, h, c)
    onehot = np.zeros((n, c), F)
    onehot[np.arange(n), y] = 1
    dZ = (((P - onehot).astype(F)) * inv_n).astype(F)
    dA = np.empty((n, h), F)
    for j in range(h):
        acc = np.zeros(n, F)
        for cc in range(c):
            acc = (acc + (dZ[:, cc] * w2[j, cc]).astype(F)).astype(F)
        dA[:, j] = np.where(A[:, j] > 0, acc, F(0))
    memory.array(launch.word(4), "<f4", n * c)[:] = dZ.reshape(-1)
    memory.array(launch.word(5), "<f4", n * h)[:] = dA.reshape(-1)


def _colsum(terms):
    acc = np.zeros(terms.shape[1:], F)
    for i in range(terms.shape[0]):
        acc = (acc + terms[i]).astype(F)
    return acc


def grad(memory, launch):
    n, d = _halves(launch, 5)
    h, c = _halves(launch, 6)
    X = memory.array(launch.word(0), "<f4", n * d).reshape(n, d)
    A = memory.array(launch.word(1), "<f4", n * h).reshape(n, h)
    dZ = memory.array(launch.word(2), "<f4", n * c).reshape(n, c)
    dA = memory.array(launch.word(3), "<f4", n * h).reshape(n, h)
    gw1 = _colsum((X[:, :, None] * dA[:, None, :]).astype(F))
    gb1 = _colsum(dA)
    gw2 = _colsum((A[:, :, None] * dZ[:, None, :]).astype(F))
    gb2 = _colsum(dZ)
    G = memory.array(launch.word(4), "<f4", d * h + h + h * c + c)
    G[:] = np.concatenate([gw1.reshape(-1), gb1, gw2.reshape(-1), gb2])


def momentum(memory, launch):
    count, mu_bits = _halves(launch, 3)
    mu = np.frombuffer(mu_bits.to_bytes(4, "little"), "<f4")[0]
    lr = _f32_lo(launch, 4)
    W = memory.array(launch.word(0), "<f4", count)
    V = memory.array(launch.word(1), "<f4", count)
    G = memory.array(launch.word(2), "<f4", count)
    V[:] = ((V * mu).astype(F) + G).astype(F)
    W[:] = (W - (V * lr).astype(F)).astype(F)


KERNELS = {"mlp-forward": forward, "mlp-dlogits": dlogits, "mlp-grad": grad, "mlp-momentum": momentum}
