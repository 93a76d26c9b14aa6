"""An independent float64 model of KMeans (tests/kmeans_clustering/KMeans): Lloyd's k-means written
from the plan's comments, reading the record and the checkpoint envelope itself (docs/formats.md) and
making its own fresh centroids (SplitMix64 over FNV-1a-64, docs/formats.md and docs/host-steps.md's
`(binary32)((binary64)((z >> shift) - center) / denominator)`)."""
import struct, sys, zlib
import numpy as np
N, D, K = 64, 2, 4
UPDATES = 5
M64 = (1 << 64) - 1

def splitmix_init(seed: bytes, count, shift=40, center=8388608, denom=4194304):
    st = 0xcbf29ce484222325
    for b in seed:
        st = ((st ^ b) * 0x100000001b3) & M64
    out = []
    for _ in range(count):
        st = (st + 0x9E3779B97F4A7C15) & M64
        z = st
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & M64
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & M64
        z ^= z >> 31
        out.append(np.float32(((z >> shift) - center) / denom))
    return np.array(out, np.float64).reshape(K, D)

def fresh():
    return splitmix_init(b"kmeans-seed-v1", K * D)

def read_record(path):
    b = open(path, "rb").read()
    assert b[:8] == b"KMEANS01" and struct.unpack_from("<Q", b, 8)[0] == 1 and len(b) == 16 + 4 * N * D
    return np.frombuffer(b, "<f4", N * D, 16).reshape(N, D).astype(np.float64)

def read_envelope(path):
    b = open(path, "rb").read()
    assert b[:8] == b"BOBCENV1" and b[-8:] == b"BOBCEND1"
    h = struct.unpack_from("<I", b, 8)[0]
    step, payload = struct.unpack_from("<QQ", b, 16)
    assert payload == 4 * K * D
    assert zlib.crc32(b[: h + payload]) == struct.unpack_from("<I", b, h + payload)[0]
    return step, np.frombuffer(b, "<f4", K * D, h).astype(np.float64).reshape(K, D)

def assign(C, X):
    dist = ((X[:, None, :] - C[None, :, :]) ** 2).sum(axis=2)          # N x K
    a = dist.argmin(axis=1)                                              # the first minimum
    return a, float(dist[np.arange(N), a].sum())

def move(C, X, a):
    C = C.copy()
    for k in range(K):
        if (a == k).any():
            C[k] = X[a == k].mean(axis=0)
    return C

def train(C, X, updates=UPDATES):
    a, initial = assign(C, X)
    for _ in range(updates):
        C = move(C, X, a)
        a, final = assign(C, X)
    return C, a, initial, final

if __name__ == "__main__":
    rec, ckin, ckout, pred, res = sys.argv[1:6]
    X = read_record(rec)
    step0, C = (0, fresh()) if ckin == "-" else read_envelope(ckin)
    C, a, i0, i1 = train(C, X)
    step, C2 = read_envelope(ckout)
    p = np.frombuffer(open(pred, "rb").read(), "<u4")
    r = np.frombuffer(open(res, "rb").read(), "<f4")
    print("step", step, "expected", step0 + UPDATES)
    print("inertia", r, "oracle", i0, i1)
    print("max |dC|", np.abs(C2 - C).max(), "assignments equal", bool((p == a).all()))
