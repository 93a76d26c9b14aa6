"""An independent NumPy LinReg invocation (no bobc): the same math as the kernels
(binary32, each product and sum rounded separately, in the kernels' order), and a
float64 run for scale.  Compares against a run's output files."""
import struct
import sys
import numpy as np

N, D, K = 64, 7, 20
LR = np.float32(1 / 20)


def read_record(path):
    b = open(path, "rb").read()
    assert b[:8] == b"LINREG01" and struct.unpack("<Q", b[8:16])[0] == 1
    X = np.frombuffer(b, "<f4", N * D, 16).reshape(N, D)
    y = np.frombuffer(b, "<f4", N, 16 + 4 * N * D)
    return X, y


def predict(W, X):
    p = np.full(N, W[D], np.float32)
    for k in range(D):
        p = p + W[k] * X[:, k]
    return p


def loss_grad(W, X, y):
    r = predict(W, X) - y
    G = np.zeros(D + 1, np.float32)
    loss = np.float32(0)
    for i in range(N):
        G[:D] = G[:D] + r[i] * X[i]
        G[D] = G[D] + r[i] * np.float32(1)
        loss = np.float32(loss + r[i] * r[i])
    return G * np.float32(2 / N), np.float32(loss * np.float32(1 / N))


def run(X, y, W=None, updates=K):
    W = np.zeros(D + 1, np.float32) if W is None else W.copy()
    G, initial = loss_grad(W, X, y)
    loss = initial
    for _ in range(updates):
        W = W - LR * G
        G, loss = loss_grad(W, X, y)
    return W, predict(W, X), initial, loss


def read_checkpoint(path):
    b = open(path, "rb").read()
    assert b[:8] == b"BOBCENV1", b[:8]
    H = struct.unpack_from("<I", b, 8)[0]
    step = struct.unpack_from("<Q", b, 16)[0]
    payload = struct.unpack_from("<Q", b, 24)[0]
    return step, np.frombuffer(b, "<f4", payload // 4, H)


def main(argv=None) -> int:
    """RECORD CKPT PRED RESULT [RESUMED_FROM]: 0 when a run's files are this model's bit for bit."""
    import argparse

    parser = argparse.ArgumentParser(
        prog="numpy_model.py",
        description="Compare a LinReg train invocation's files (bobc run --reference, bobc sim or a "
                    "GPU host) with this independent NumPy model: exit 0 when they are its bit for bit, "
                    "1 when they differ.")
    parser.add_argument("record", help="the input record the invocation read (make_record.py)")
    parser.add_argument("checkpoint", help="the checkpoint it wrote (--checkpoint-out)")
    parser.add_argument("predictions", help="the predictions it wrote (--predictions)")
    parser.add_argument("result", help="the result it wrote (--result)")
    parser.add_argument("resumed_from", nargs="?", help="the checkpoint it resumed from (--checkpoint), if any")
    args = parser.parse_args(argv)
    record, ckpt, pred, result = args.record, args.checkpoint, args.predictions, args.result
    resume = [args.resumed_from] if args.resumed_from is not None else []
    X, y = read_record(record)
    start = read_checkpoint(resume[0]) if resume else (0, None)
    W, P, initial, loss = run(X, y, start[1])
    step, Wc = read_checkpoint(ckpt)
    Pr = np.frombuffer(open(pred, "rb").read(), "<f4")
    R = np.frombuffer(open(result, "rb").read(), "<f4")
    same = (step == start[0] + K and np.array_equal(W, Wc) and np.array_equal(P, Pr)
            and np.array_equal(np.array([initial, loss], np.float32), R))
    print(f"step {step}; W, predictions and losses {'equal' if same else 'DIFFER'}; loss {initial} -> {loss}")
    # float64 gradient descent, for a sense of scale
    W64 = np.zeros(D + 1) if start[1] is None else start[1].astype(np.float64)
    Xb = np.concatenate([X, np.ones((N, 1))], axis=1).astype(np.float64)
    for _ in range(K):
        W64 = W64 - (1 / 20) * (2 / N) * Xb.T @ (Xb @ W64 - y)
    print(f"max |W - W (float64 descent)|: {np.abs(Wc - W64).max():.3g}")
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
