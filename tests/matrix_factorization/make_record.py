"""Write a MatFac record: MATFAC01, u64 1, users (64 u32), items (64 u32), ratings (64 binary32).

The triples are drawn deterministically (NumPy's PCG64 from a seed): 64 triples over 16 users and
12 items, so every user appears about 4 times and every item about 5 times in the batch -- the
gradient rows the kernel scatters with atomics are shared.  The ratings come from a rank-2
model plus small noise, so a rank-4 factorization can fit them."""
import struct
import sys

import numpy as np

B, NU, NI = 64, 16, 12


def make(seed=0):
    rng = np.random.default_rng(seed)
    users = rng.integers(0, NU, B).astype(np.uint32)
    items = rng.integers(0, NI, B).astype(np.uint32)
    P, Q = rng.standard_normal((NU, 2)) * 0.8, rng.standard_normal((NI, 2)) * 0.8
    ratings = (P[users] * Q[items]).sum(axis=1) + 0.3 + 0.05 * rng.standard_normal(B)
    return users, items, ratings.astype(np.float32)


def record_bytes(triples):
    users, items, ratings = triples
    return (b"MATFAC01" + struct.pack("<Q", 1) + users.astype("<u4").tobytes()
            + items.astype("<u4").tobytes() + ratings.astype("<f4").tobytes())


if __name__ == "__main__":
    open(sys.argv[1], "wb").write(record_bytes(make(int(sys.argv[2]) if len(sys.argv) > 2 else 0)))
