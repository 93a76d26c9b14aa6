"""Write a LinReg input record (LinReg.Model): magic LINREG01, version u64 1,
X (64 x 7 binary32, row-major), y (64 binary32) = X w* + b* + noise."""
import argparse
import struct
import numpy as np

N, D = 64, 7

def make(seed: int = 0):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((N, D)).astype(np.float32)
    w = np.linspace(-1.5, 1.5, D).astype(np.float32)
    y = (X @ w + np.float32(0.75) + 0.05 * rng.standard_normal(N)).astype(np.float32)
    return X, y

def record_bytes(X, y) -> bytes:
    return b"LINREG01" + struct.pack("<Q", 1) + X.astype("<f4").tobytes() + y.astype("<f4").tobytes()

if __name__ == "__main__":
    p = argparse.ArgumentParser()
    p.add_argument("-o", required=True)
    p.add_argument("--seed", type=int, default=0)
    a = p.parse_args()
    X, y = make(a.seed)
    open(a.o, "wb").write(record_bytes(X, y))
