"""Ridge in float64, independent of bobc: its own reading of the record and of the checkpoint
envelope (docs/formats.md, CRC-32 checked) and its own SplitMix64 fresh state, then the math of
Ridge.Model -- L = (1/N) sum r^2 + lambda |w|^2, G = dL/d(w, b), V = mu V + G, W = W - lr V.

    python examples/ridge/numpy_model.py RECORD [CHECKPOINT_IN|-] CHECKPOINT_OUT PREDICTIONS RESULT

prints the largest differences from the files a run wrote (a fresh run: CHECKPOINT_IN `-`)."""
from __future__ import annotations

import struct
import sys
import zlib

import numpy as np

N, D, UPDATES = 32, 6, 25
LR, MU, LAMBDA = 1 / 20, 1 / 2, 1 / 100
SEED = b"ridge-splitmix-v1"          # the contract's seed identity, its initializer's seed
MASK = (1 << 64) - 1


def fresh_w() -> np.ndarray:
    """docs/formats.md's generator: FNV-1a-64 of the seed, SplitMix64, u = z >> 40,
    w = binary32((u - 2^23) / 83886080) -- uniform in [-0.1, 0.1)."""
    h = 0xCBF29CE484222325
    for c in SEED:
        h = ((h ^ c) * 0x100000001B3) & MASK
    out = []
    for _ in range(D + 1):
        h = (h + 0x9E3779B97F4A7C15) & MASK
        z = h
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK
        z ^= z >> 31
        out.append(np.float32(((z >> 40) - 8388608) / 83886080.0))
    return np.array(out, np.float64)


def read_record(path: str):
    data = open(path, "rb").read()
    assert data[:8] == b"RIDGE001" and len(data) == 16 + 4 * N * (D + 1), path
    X = np.frombuffer(data, "<f4", N * D, 16).reshape(N, D).astype(np.float64)
    y = np.frombuffer(data, "<f4", N, 16 + 4 * N * D).astype(np.float64)
    return X, y


def read_checkpoint(path: str):
    """(step, W, V) of a checkpoint envelope."""
    data = open(path, "rb").read()
    assert data[:8] == b"BOBCENV1" and data[-8:] == b"BOBCEND1", path
    header, = struct.unpack_from("<I", data, 8)
    step, payload = struct.unpack_from("<QQ", data, 16)
    assert struct.unpack_from("<I", data, header + payload)[0] == zlib.crc32(data[:header + payload]), path
    state = np.frombuffer(data, "<f4", payload // 4, header).astype(np.float64)
    return step, state[:D + 1], state[D + 1:]


def loss_grad(W, X, y):
    r = X @ W[:D] + W[D] - y
    loss = r @ r / N + LAMBDA * (W[:D] @ W[:D])
    return loss, np.append(2 / N * (X.T @ r) + 2 * LAMBDA * W[:D], 2 / N * r.sum())


def train(W, V, X, y, updates: int = UPDATES):
    """(W, V, the loss before the first update, the loss after the last)."""
    first, G = loss_grad(W, X, y)
    last = first
    for _ in range(updates):
        V = MU * V + G
        W = W - LR * V
        last, G = loss_grad(W, X, y)
    return W, V, first, last


def compare(record, checkpoint_in, checkpoint_out, predictions, result) -> dict:
    X, y = read_record(record)
    if checkpoint_in == "-":
        step, W, V = 0, fresh_w(), np.zeros(D + 1)
    else:
        step, W, V = read_checkpoint(checkpoint_in)
    W, V, first, last = train(W, V, X, y)
    out_step, out_W, out_V = read_checkpoint(checkpoint_out)
    losses = np.frombuffer(open(result, "rb").read(), "<f4").astype(np.float64)
    P = np.frombuffer(open(predictions, "rb").read(), "<f4").astype(np.float64)
    return {"step": (out_step, step + UPDATES), "W": np.abs(out_W - W).max(), "V": np.abs(out_V - V).max(),
            "losses": np.abs(losses - [first, last]).max(), "predictions": np.abs(P - (X @ W[:D] + W[D])).max(),
            "loss": last}


if __name__ == "__main__":
    for key, value in compare(*sys.argv[1:6]).items():
        print(key, value)
