"""Write an Mlp record: MLPCLS01, u64 1, X (32 x 4 binary32), labels (32 u32 < 4)."""
import struct, sys
import numpy as np
N, D, C = 32, 4, 4

def make(seed=0):
    rng = np.random.default_rng(seed)
    centers = np.array([[1, 1, 0, 0], [-1, 1, 0, 0], [0, -1, 1, 0], [0, 0, -1, 1]], np.float32)
    y = rng.integers(0, C, N).astype(np.uint32)
    X = (centers[y] + 0.5 * rng.standard_normal((N, D))).astype(np.float32)
    return X, y

def record_bytes(X, y):
    return b"MLPCLS01" + struct.pack("<Q", 1) + X.astype("<f4").tobytes() + y.astype("<u4").tobytes()

if __name__ == "__main__":
    X, y = make(int(sys.argv[2]) if len(sys.argv) > 2 else 0)
    open(sys.argv[1], "wb").write(record_bytes(X, y))
