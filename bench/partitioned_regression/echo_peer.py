"""Worker 1 of seed 003's pair played by the host CPU alone (no GPU), for timing worker 0 by itself.

    python bench/partitioned_regression/echo_peer.py --port 47311 --steps 2048

It connects to worker 0 at 127.0.0.1:port and speaks the pair's protocol
(docs/partitioned-regression.md, "The peers' message"): first the run's identity (it answers a
fresh worker 0 of any epoch built with the same step count as worker 1 built alike would, and
refuses a resume), then each step it receives worker 0's
message, answers with its own partial, then does worker 1's backward and update with the
NumPy reference's arithmetic (partitioned_regression.reference), off the exchange's critical
path.  So worker 0, run against it, trains to the same bits as in the real pair, while only one
process uses the GPU: the difference between the two runs' step times is what sharing the GPU
costs.  Exits 0 after the pair's last exchange (step steps + 2: both prepared their outputs), nonzero
on a protocol error.
"""
from __future__ import annotations

import argparse
import socket
import struct
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "examples/partitioned_regression"))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from partitioned_regression import formats as F  # noqa: E402
from partitioned_regression import reference as R  # noqa: E402

MESSAGE = struct.Struct("<4sIQd")          # b"CDPR", the sender's worker, the step, the partial
HELLO = struct.Struct("<4sIQQQQQQ")        # b"CDPH", the sender's worker, epoch, resume, steps, checkpoint's steps,
                                           # the numerics' word, the plan's word
PREPARED = struct.unpack("<d", b"PREPARED")[0]    # the last exchange's payload: ready to publish
DATA = struct.Struct("<4sI32s")            # b"CDPD", the sender's worker, its record's checksums


def connect(port: int, timeout_s: float = 10.0) -> socket.socket:
    deadline = time.monotonic() + timeout_s
    while True:
        try:
            peer = socket.create_connection(("127.0.0.1", port))
            peer.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            return peer
        except ConnectionRefusedError:
            if time.monotonic() > deadline:
                raise SystemExit(f"echo_peer: nobody listens at 127.0.0.1:{port}")
            time.sleep(0.01)


def receive(peer: socket.socket, size: int = MESSAGE.size) -> bytes:
    data = b""
    while len(data) < size:
        chunk = peer.recv(size - len(data))
        if not chunk:
            raise SystemExit("echo_peer: worker 0 closed the connection")
        data += chunk
    return data


def agree(peer: socket.socket, steps: int) -> None:
    """The connect-time exchange of the run's identity: worker 1 of a fresh run of `steps` steps."""
    tag, worker, epoch, resume, theirs, taken, numerics, plan = HELLO.unpack(receive(peer, HELLO.size))
    if tag != b"CDPH" or worker != 0:
        raise SystemExit(f"echo_peer: unexpected first message {tag!r} worker {worker}")
    peer.sendall(HELLO.pack(b"CDPH", 1, epoch, 0, steps, 0, numerics, plan))     # built alike
    if resume or theirs != steps:
        raise SystemExit(f"echo_peer: worker 0 runs {theirs} steps{' from a checkpoint' if resume else ''}; "
                         f"this peer plays a fresh worker 1 of {steps} steps")


def serve(peer: socket.socket, steps: int, coordinate: R.Coordinate, data: R.Data) -> None:
    """Worker 1's side of `steps` steps and the last exchange over the connected `peer`."""
    rows = len(data.targets)
    w, a = coordinate.weight, coordinate.accumulator
    x = float(data.features[0, 1])
    partial = R.linear_step(w, x, 0.0)[0]
    agree(peer, steps)
    # the data's identity: worker 1's record of the same data set
    tag, worker, _ = DATA.unpack(receive(peer, DATA.size))
    if tag != b"CDPD" or worker != 0:
        raise SystemExit(f"echo_peer: unexpected data message {tag!r} worker {worker}")
    peer.sendall(F.data_identity(F.record(data, 1, coordinate), 1))
    for step in range(1, steps + 3):
        tag, worker, got, theirs = MESSAGE.unpack(receive(peer))
        if tag != b"CDPR" or worker != 0 or got != step:
            raise SystemExit(f"echo_peer: step {step}: unexpected message {tag!r} worker {worker} step {got}")
        if step == steps + 2:       # worker 0 prepared its outputs: this peer says it did too
            if theirs != PREPARED:  # checked before answering, as worker 1's host does
                raise SystemExit(f"echo_peer: step {step}: worker 0's last message is not PREPARED")
            peer.sendall(MESSAGE.pack(b"CDPR", 1, step, PREPARED))
            break
        peer.sendall(MESSAGE.pack(b"CDPR", 1, step, partial))
        if step > steps:
            continue
        row = (step - 1) % rows
        error = float(R.np.float64(R.np.float64(theirs) + R.np.float64(partial)) - R.np.float64(data.targets[row]))
        gradient = R.linear_step(error, x, 0.0)[0]
        w, a = R.update(w, a, gradient, coordinate.decay, coordinate.rate)
        x = float(data.features[step % rows, 1])
        partial = R.linear_step(w, x, 0.0)[0]


def main():
    import pytorch_pair
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--steps", type=int, required=True)
    arguments = parser.parse_args()
    with connect(arguments.port) as peer:
        serve(peer, arguments.steps, pytorch_pair.COORDINATES[1], R.generate())


if __name__ == "__main__":
    main()
