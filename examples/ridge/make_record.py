"""Write a Ridge input record (Ridge.Model): magic RIDGE001, version u64 1, X (32 x 6 binary32,
row-major), y (32 binary32) = X w* + 1/2 + noise.

    python examples/ridge/make_record.py -o record.bin [--seed N]
"""
import argparse
import struct

import numpy as np

N, D = 32, 6


def make(seed: int = 7):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((N, D)).astype(np.float32)
    y = (X @ np.linspace(-1, 1, D) + 0.5 + 0.1 * rng.standard_normal(N)).astype(np.float32)
    return X, y


def record_bytes(X, y) -> bytes:
    return b"RIDGE001" + struct.pack("<Q", 1) + X.astype("<f4").tobytes() + y.astype("<f4").tobytes()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(prog="make_record.py")
    parser.add_argument("-o", "--output", required=True)
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()
    with open(args.output, "wb") as out:
        out.write(record_bytes(*make(args.seed)))
