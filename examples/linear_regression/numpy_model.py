"""An independent NumPy LinReg invocation (no bobc): the same math as the kernels
(binary32, each product and sum rounded separately, in the kernels' order), and a
float64 run for scale.  Compares against a run's output files."""
import struct
import sys
import numpy as np

N, D, K = 64, 7, 20
LR = np.float32(1 / 20)


def _shown(path) -> str:
    """`path` as a message shows it: a control character (a newline) as '?', so it stays one line."""
    import os

    return os.fsdecode(os.fsencode(path).translate(bytes(63 if b < 32 or b == 127 else b for b in range(256))))


class Refused(Exception):
    """A file this comparison cannot read or does not understand: one line, exit 2 (main)."""


def read_file(path, what: str) -> bytes:
    """The bytes of the regular file `path` (`what` names it in a refusal): opened without
    blocking, so a FIFO is refused, never waited on; a folder, a device or a missing file is a
    Refused naming it, never a traceback."""
    import os
    import stat

    shown = _shown(path)
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError as error:
        raise Refused(f"{what} {shown}: cannot open: {error.strerror}") from None
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            kind = ("a folder" if stat.S_ISDIR(mode) else "a FIFO" if stat.S_ISFIFO(mode)
                    else "a device" if stat.S_ISCHR(mode) or stat.S_ISBLK(mode) else "a socket")
            raise Refused(f"{what} {shown}: {kind}, not a regular file")
        with os.fdopen(fd, "rb", closefd=False) as handle:
            return handle.read()
    except OSError as error:
        raise Refused(f"{what} {shown}: cannot read: {error.strerror}") from None
    finally:
        os.close(fd)


def read_record(path):
    b = read_file(path, "record")
    if len(b) != 16 + 4 * N * (D + 1) or b[:8] != b"LINREG01" or struct.unpack("<Q", b[8:16])[0] != 1:
        raise Refused(f"record {_shown(path)}: not a LinReg input record (make_record.py writes one)")
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
    b = read_file(path, "checkpoint")
    if len(b) < 32 or b[:8] != b"BOBCENV1":
        raise Refused(f"checkpoint {_shown(path)}: not a checkpoint (it does not begin BOBCENV1)")
    H = struct.unpack_from("<I", b, 8)[0]
    step = struct.unpack_from("<Q", b, 16)[0]
    payload = struct.unpack_from("<Q", b, 24)[0]
    if H + payload > len(b) or payload % 4:
        raise Refused(f"checkpoint {_shown(path)}: its header says {payload} payload bytes at {H}, past its "
                      f"{len(b)} bytes")
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
    try:
        X, y = read_record(record)
        start = read_checkpoint(resume[0]) if resume else (0, None)
        step, Wc = read_checkpoint(ckpt)
        predictions, results = read_file(pred, "predictions"), read_file(result, "result")
    except Refused as refusal:          # one line, exit 2: 1 says "they differ"
        print(f"{parser.prog}: error: {refusal}", file=sys.stderr)
        return 2
    W, P, initial, loss = run(X, y, start[1])
    Pr = np.frombuffer(predictions[:len(predictions) // 4 * 4], "<f4")
    R = np.frombuffer(results[:len(results) // 4 * 4], "<f4")
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
