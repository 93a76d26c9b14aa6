"""An independent float64 model of MatFac (tests/matrix_factorization/MatFac): matrix factorization
with biases trained by full-batch gradient descent on the mean squared error, written from the
plan's comments (MatFac/Model.bob).  It reads the record and the checkpoint envelope itself
(docs/formats.md) and makes its own fresh state (SplitMix64 over FNV-1a-64: docs/formats.md, and
docs/host-steps.md's `(binary32)((binary64)((z >> shift) - center) / denominator)`).  Nothing of
bobc's is imported.  The gradient rows shared by several triples are summed with np.add.at, the
exact sums' float64 stand-in for the kernel's atomics."""
import struct
import sys
import zlib

import numpy as np

NU, NI, K, B = 16, 12, 4, 64
UPDATES = 20
LR = 0.5
WORDS = NU * K + NI * K + NU + NI
M64 = (1 << 64) - 1


def splitmix(seed: bytes, count, shift=40, center=8388608, denominator=16777216):
    state = 0xcbf29ce484222325
    for byte in seed:
        state = ((state ^ byte) * 0x100000001b3) & M64
    out = []
    for _ in range(count):
        state = (state + 0x9E3779B97F4A7C15) & M64
        z = state
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & M64
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & M64
        z ^= z >> 31
        out.append(np.float32(((z >> shift) - center) / denominator))
    return np.array(out, np.float64)


def fresh():
    return splitmix(b"matfac-seed-v1", WORDS)


def unpack(W):
    """U (NU x K), V (NI x K), bu (NU), bi (NI): views of the flat parameters W."""
    a, b, c = NU * K, NU * K + NI * K, NU * K + NI * K + NU
    return W[:a].reshape(NU, K), W[a:b].reshape(NI, K), W[b:c], W[c:]


def read_record(path):
    data = open(path, "rb").read()
    assert data[:8] == b"MATFAC01" and struct.unpack_from("<Q", data, 8)[0] == 1 and len(data) == 16 + 12 * B
    users = np.frombuffer(data, "<u4", B, 16).astype(np.int64)
    items = np.frombuffer(data, "<u4", B, 16 + 4 * B).astype(np.int64)
    ratings = np.frombuffer(data, "<f4", B, 16 + 8 * B).astype(np.float64)
    return users, items, ratings


def read_envelope(path):
    data = open(path, "rb").read()
    assert data[:8] == b"BOBCENV1" and data[-8:] == b"BOBCEND1"
    header = struct.unpack_from("<I", data, 8)[0]
    step, payload = struct.unpack_from("<QQ", data, 16)
    assert payload == 4 * WORDS
    assert zlib.crc32(data[: header + payload]) == struct.unpack_from("<I", data, header + payload)[0]
    return step, np.frombuffer(data, "<f4", WORDS, header).astype(np.float64)


def predict(W, users, items):
    U, V, bu, bi = unpack(W)
    return bu[users] + bi[items] + (U[users] * V[items]).sum(axis=1)


def loss_and_gradient(W, users, items, ratings):
    U, V, bu, bi = unpack(W)
    e = predict(W, users, items) - ratings
    g = 2.0 / len(ratings) * e
    G = np.zeros_like(W)
    gU, gV, gbu, gbi = unpack(G)
    np.add.at(gU, users, g[:, None] * V[items])
    np.add.at(gV, items, g[:, None] * U[users])
    np.add.at(gbu, users, g)
    np.add.at(gbi, items, g)
    return float((e * e).mean()), G


def train(W, users, items, ratings, updates=UPDATES):
    """The plan's schedule: the initial loss; then per update W -= lr G and the loss at the new W.
    Returns the last W, the predictions at it, the initial and the final loss."""
    initial, G = loss_and_gradient(W, users, items, ratings)
    final = initial
    for _ in range(updates):
        W = W - LR * G
        final, G = loss_and_gradient(W, users, items, ratings)
    return W, predict(W, users, items), initial, final


if __name__ == "__main__":
    record, checkpoint_in, checkpoint_out, predictions, result = sys.argv[1:6]
    triples = read_record(record)
    step0, W = (0, fresh()) if checkpoint_in == "-" else read_envelope(checkpoint_in)
    W, p, initial, final = train(W, *triples)
    step, W_run = read_envelope(checkpoint_out)
    print("step", step, "expected", step0 + UPDATES)
    print("losses", np.fromfile(result, "<f4"), "oracle", initial, final)
    print("max |dW|", np.abs(W_run - W).max(), "max |dp|", np.abs(np.fromfile(predictions, "<f4") - p).max())
