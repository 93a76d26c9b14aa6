"""A stand-in for seed 003's worker 0 for tests that run a built worker 1 alone: it listens at
the worker's port and says its side of the connect-time exchange (docs/partitioned-regression.md)
for the run these tests build (`coordinateH200Worker UUID 0 W PORT 0 1 4`: epoch 1, fresh,
4 steps, T 0, the numerics' and plan's words read from the built host: `words`), so that the
host goes on to open its device."""
from __future__ import annotations

import socket
import struct
import subprocess
import threading
from pathlib import Path


def words(host: Path) -> tuple[int, int]:
    """The numerics' and the plan's words a built worker host says in its run's identity: the
    immediates of the last two of the seven Stores before its first Send or Receive."""
    from bobc.native import artifact, program
    commands = program.decode(artifact.split(Path(host).read_bytes(), str(host)).program).commands
    first = next(i for i, c in enumerate(commands) if c.name in ("Send", "Receive"))
    stores = [c for c in commands[first - 7:first] if c.name == "Store"]
    assert len(stores) == 7, [c.name for c in commands[first - 7:first]]
    return stores[5].v[0][1], stores[6].v[0][1]


def hello(worker: int, numerics_and_plan: tuple[int, int]) -> bytes:
    """Worker `worker`'s message: b"CDPH" and the worker, epoch 1, fresh, 4 steps, T 0, the words."""
    return struct.pack("<7Q", int.from_bytes(b"CDPH", "little") | worker << 32, 1, 0, 4, 0, *numerics_and_plan)


def data_of_a_partner(record: bytes) -> bytes:
    """Worker 0's data message for a record with `record`'s targets and another feature column
    (every x 1.0)."""
    from partitioned_regression import formats as F
    rows = b"".join(struct.pack("<d", 1.0) + record[32 + 16 * i + 8:32 + 16 * i + 16]
                    for i in range(F.record_rows(record)))
    return F.data_identity(record[:32] + rows, 0)


def _greet(listener: socket.socket, said: bytes, data: bytes) -> None:
    """Accept, say worker 0's hello and (once the host answered it) its data message, and keep the
    connection until the host closes it."""
    connection, _ = listener.accept()
    with connection:
        connection.sendall(said)
        received = b""
        while len(received) < len(said):
            try:
                chunk = connection.recv(len(said) - len(received))
            except ConnectionResetError:
                return
            if not chunk:
                return
            received += chunk
        connection.sendall(data)
        try:
            while connection.recv(4096):
                pass
        except ConnectionResetError:
            pass


def run_beside_worker0(port: int, command: list[str], **run) -> subprocess.CompletedProcess:
    """subprocess.run(command, **run) while a stand-in worker 0 listens at `port` (command[0]: the
    built worker 1, command[-1] its record, already written)."""
    with socket.socket() as listener:
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        listener.bind(("127.0.0.1", port))
        listener.listen(1)
        said = hello(0, words(command[0]))
        data = data_of_a_partner(Path(command[-1]).read_bytes())
        worker0 = threading.Thread(target=_greet, args=(listener, said, data), daemon=True)
        worker0.start()
        done = subprocess.run(command, **run)
        worker0.join(10)
        return done
