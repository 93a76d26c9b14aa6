"""A stand-in for seed 003's worker 0 for tests that run a built worker 1 alone: it listens at
the worker's port and says its side of the connect-time exchange (docs/partitioned-regression.md)
for the run these tests build (`coordinateH200Worker UUID 0 W PORT 0 1 4`: epoch 1, fresh,
4 steps, T 0), so that the host goes on to open its device."""
from __future__ import annotations

import socket
import struct
import subprocess
import threading


def hello(worker: int) -> bytes:
    """Worker `worker`'s message: b"CDPH" and the worker, epoch 1, fresh, 4 steps, T 0."""
    return struct.pack("<5Q", int.from_bytes(b"CDPH", "little") | worker << 32, 1, 0, 4, 0)


def _greet(listener: socket.socket) -> None:
    """Accept, say worker 0's hello, and keep the connection until the host closes it."""
    connection, _ = listener.accept()
    with connection:
        connection.sendall(hello(0))
        while connection.recv(4096):
            pass


def run_beside_worker0(port: int, command: list[str], **run) -> subprocess.CompletedProcess:
    """subprocess.run(command, **run) while a stand-in worker 0 listens at `port`."""
    with socket.socket() as listener:
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        listener.bind(("127.0.0.1", port))
        listener.listen(1)
        worker0 = threading.Thread(target=_greet, args=(listener,), daemon=True)
        worker0.start()
        done = subprocess.run(command, **run)
        worker0.join(10)
        return done
