"""An independent float64 model of the two-layer MLP classifier (tests/mlp_classifier/Mlp): it reads the
record and the checkpoint envelope itself (docs/formats.md), makes its own fresh state (SplitMix64 over
FNV-1a-64, written from docs/formats.md), trains in float64 and compares with a run's outputs."""
import struct, sys, zlib
import numpy as np
N, D, H, C = 32, 4, 8, 4
P = D * H + H + H * C + C
UPDATES, LR, MU = 15, 0.25, 0.5
M64 = (1 << 64) - 1

def splitmix_init(seed: bytes, count, shift=40, center=8388608, denom=16777216):
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
    return np.array(out, np.float64)

def read_record(path):
    b = open(path, "rb").read()
    assert b[:8] == b"MLPCLS01" and struct.unpack_from("<Q", b, 8)[0] == 1
    X = np.frombuffer(b, "<f4", N * D, 16).reshape(N, D).astype(np.float64)
    y = np.frombuffer(b, "<u4", N, 16 + 4 * N * D).astype(np.int64)
    return X, y

def read_envelope(path):
    b = open(path, "rb").read()
    assert b[:8] == b"BOBCENV1" and b[-8:] == b"BOBCEND1"
    h = struct.unpack_from("<I", b, 8)[0]
    step, payload = struct.unpack_from("<QQ", b, 16)
    assert zlib.crc32(b[: h + payload]) == struct.unpack_from("<I", b, h + payload)[0]
    state = np.frombuffer(b, "<f4", payload // 4, h).astype(np.float64)
    return step, state[:P].copy(), state[P:].copy()

def split(W):
    return (W[: D * H].reshape(D, H), W[D * H : D * H + H],
            W[D * H + H : D * H + H + H * C].reshape(H, C), W[D * H + H + H * C :])

def forward(W, X, y):
    w1, b1, w2, b2 = split(W)
    A = np.maximum(X @ w1 + b1, 0)
    Z = A @ w2 + b2
    Z = Z - Z.max(axis=1, keepdims=True)
    Pr = np.exp(Z) / np.exp(Z).sum(axis=1, keepdims=True)
    return A, Pr, float(np.mean(-np.log(Pr[np.arange(N), y])))

def gradient(W, X, y):
    w1, b1, w2, b2 = split(W)
    A, Pr, _ = forward(W, X, y)
    dZ = Pr.copy(); dZ[np.arange(N), y] -= 1; dZ /= N
    dA = (dZ @ w2.T) * (A > 0)
    return np.concatenate([(X.T @ dA).ravel(), dA.sum(0), (A.T @ dZ).ravel(), dZ.sum(0)])

def train(W, V, X, y, updates=UPDATES):
    initial = forward(W, X, y)[2]
    for _ in range(updates):
        V = MU * V + gradient(W, X, y)
        W = W - LR * V
    _, Pr, final = forward(W, X, y)
    return W, V, Pr, initial, final

def fresh():
    return splitmix_init(b"mlp-seed-v1", P), np.zeros(P)

if __name__ == "__main__":
    rec, ckin, ckout, pred, res = sys.argv[1:6]
    X, y = read_record(rec)
    step0, W, V = (0, *fresh()) if ckin == "-" else read_envelope(ckin)
    W, V, Pr, l0, l1 = train(W, V, X, y)
    step, W2, V2 = read_envelope(ckout)
    p = np.frombuffer(open(pred, "rb").read(), "<f4").reshape(N, C)
    r = np.frombuffer(open(res, "rb").read(), "<f4")
    print("step", step, "expected", step0 + UPDATES)
    print("loss", r, "oracle", l0, l1)
    print("max |dW|", np.abs(W2 - W).max(), "|dV|", np.abs(V2 - V).max(), "|dP|", np.abs(p - Pr).max())
