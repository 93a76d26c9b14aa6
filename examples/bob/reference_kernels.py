"""Bob's kernels in NumPy, registered with the plan-driven reference host
(bobc.reference.host): each reads its arguments from its launch's kernel
parameters (argument i = 64-bit word i; the AdamW scalars from byte 32) and
works on the plan's buffers, as the device kernel of the same name does
(../shared/docs/bob.md; the arithmetic is the intended math: binary64 inside
the softmax, rounded once to binary32; AdamW elementwise in binary32).

    from bobc.reference.host import ReferenceHost
    ReferenceHost(plan, KERNELS).run("train", record, None)
"""
from __future__ import annotations

import numpy as np

VOCABULARY = 256


def _table(memory, address):
    return memory.array(address, "<f4", VOCABULARY * VOCABULARY).reshape(VOCABULARY, VOCABULARY)


def loss_gradient(memory, launch):
    """W at 0, G at 1 (written), the u32 targets at 2, the loss block at 3 (written)."""
    targets = memory.array(launch.word(2), "<u4", VOCABULARY).astype(np.int64)
    rows = np.arange(VOCABULARY)
    # quiet, as the device is: a checkpoint's W may hold a signalling NaN (a byte-swapped payload),
    # whose widening NumPy warns about ("invalid value encountered in cast") -- the values are
    # the same with or without the warning, and no warning of Python's reaches a user
    with np.errstate(all="ignore"):
        W = _table(memory, launch.word(0)).astype(np.float64)
        top = W.max(axis=1, keepdims=True)
        e = np.exp(W - top)
        total = e.sum(axis=1, keepdims=True)
        losses = (np.log(total) + top)[:, 0] - W[rows, targets]
        softmax = e / total
        softmax[rows, targets] -= 1.0
        gradients = softmax.astype(np.float32) * np.float32(1.0 / VOCABULARY)
        _table(memory, launch.word(1))[:] = gradients
        memory.array(launch.word(3), "<f4", VOCABULARY)[:] = losses.astype(np.float32)


def row_gather(memory, launch):
    """The logit row (written) at 0, the prompt's last byte (u32) at 1, W at 2."""
    byte = int(memory.array(launch.word(1), "<u4", 1)[0])
    memory.array(launch.word(0), "<f4", VOCABULARY)[:] = _table(memory, launch.word(2))[byte]


def greedy_argmax(memory, launch):
    """{token, validity} (written) at 0 from the logit row at 1: the first maximum;
    a row holding NaN or Inf is invalid, token 0."""
    row = memory.array(launch.word(1), "<f4", VOCABULARY)
    valid = bool(np.isfinite(row).all())
    token = int(np.argmax(row)) if valid else 0
    memory.array(launch.word(0), "<u4", 2)[:] = (token, int(valid))


def adamw(memory, launch):
    """W, G, M, V at 0..3; nine scalars from byte 32: alpha, epsilon, decay, beta1,
    1 - beta1, beta2, 1 - beta2 (binary32), the count and t (u32)."""
    f = np.frombuffer(launch.parameters, dtype="<f4", count=7, offset=32)
    alpha, epsilon, decay, beta1, one_minus_beta1, beta2, one_minus_beta2 = (np.float32(x) for x in f)
    W, G, M, V = (_table(memory, launch.word(i)) for i in range(4))
    with np.errstate(all="ignore"):
        w = W * decay
        m = beta1 * M + one_minus_beta1 * G
        v = beta2 * V + one_minus_beta2 * (G * G)
        w = w - alpha * m / (np.sqrt(v) + epsilon)
    W[:], M[:], V[:] = w, m, v


KERNELS = {
    "bob-loss-gradient": loss_gradient,
    "bob-row-gather": row_gather,
    "bob-greedy-argmax": greedy_argmax,
    "bob-adamw": adamw,
}
