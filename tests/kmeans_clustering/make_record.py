"""Write a KMeans record: KMEANS01, u64 1, X (64 x 2 binary32): four blobs of 16 points."""
import struct, sys
import numpy as np
N, D = 64, 2

def make(seed=0):
    rng = np.random.default_rng(seed)
    centers = np.array([[1.5, 1.5], [-1.5, 1.5], [-1.5, -1.5], [1.5, -1.5]])
    X = centers[np.arange(N) % 4] + 0.4 * rng.standard_normal((N, D))
    return X.astype(np.float32)

def record_bytes(X):
    return b"KMEANS01" + struct.pack("<Q", 1) + X.astype("<f4").tobytes()

if __name__ == "__main__":
    open(sys.argv[1], "wb").write(record_bytes(make(int(sys.argv[2]) if len(sys.argv) > 2 else 0)))
