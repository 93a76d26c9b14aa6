"""A listening endpoint whose first connection stays open and silent (a health check or port
scanner holding its connection, a stale process) while the real peer waits queued behind it
(probe s41 peerfaults finding 1).  The peer that connects receives first (seed 003's worker 1,
Native.Peers `connector`), so it sends nothing until the listener speaks to it: before, the
listener waited out its whole limit on the silent connection and both ended with status 5
("peer A sent nothing for N ms" / "closed the connection at message 1"), the real peer never
heard.  Now a connection silent for half the limit while another waits is not the peer, as one
that closes before its first byte is not (docs/native-host.md, "Endpoints"): the waiting one is
sent what was sent and pairs.  The expected bytes are the scripted peer's own (what it sent is
what the listener must write), not either executor's output."""
from __future__ import annotations

import os
import socket
import subprocess
import threading
import time

import pytest

from native_helpers import peer_host_at_own_port, run_reference

LIMIT_MS = 2000


@pytest.fixture
def listener(tmp_path):
    """Native.Peers' listener (sends argument 0's 16 bytes, receives 16 into argument 1) built for
    a port of this test's own (bind(0))."""
    return peer_host_at_own_port(tmp_path, "listener")


def silent_then_peer(port: int, said: list, stop: threading.Event) -> None:
    """Connect and hold the connection silent; once the listener has spoken on it (it was
    accepted), connect the real peer behind it: it receives 16 bytes, then sends b"P" * 16."""
    deadline = time.monotonic() + 20
    while True:
        try:
            silent = socket.create_connection(("127.0.0.1", port), timeout=10)
            break
        except OSError:
            if time.monotonic() > deadline:
                return
            time.sleep(0.02)
    with silent:
        said.append(silent.recv(16))            # accepted: the listener sent it its first message
        with socket.create_connection(("127.0.0.1", port), timeout=10) as peer:
            received = b""
            while len(received) < 16:
                chunk = peer.recv(16 - len(received))
                if not chunk:
                    break
                received += chunk
            said.append(received)
            peer.sendall(b"P" * 16)
            stop.wait(20)


@pytest.mark.parametrize("executor", ["c", "reference"])
def test_a_silent_first_connection_does_not_keep_the_waiting_peer_out(listener, tmp_path, executor):
    code, host, port = listener
    folder = tmp_path / "run"
    folder.mkdir()
    (folder / "mine.bin").write_bytes(b"L" * 16)
    said, stop = [], threading.Event()
    scripted = threading.Thread(target=silent_then_peer, args=(port, said, stop), daemon=True)
    environment = {"NATIVE_DEVICE": "memory", "NATIVE_PEER_TIMEOUT_MS": str(LIMIT_MS)}
    try:
        if executor == "c":
            process = subprocess.Popen([str(host), "mine.bin", "theirs.bin"], cwd=folder, stderr=subprocess.PIPE,
                                       env={**os.environ, **environment})
            scripted.start()
            status, stderr = process.wait(30), process.stderr.read()
        else:
            scripted.start()
            outcome = run_reference(code, folder, ["mine.bin", "theirs.bin"], env=environment)
            status, stderr = outcome.status, outcome.stderr
    finally:
        stop.set()
        scripted.join(30)
    assert status == 0, stderr
    assert said == [b"L" * 16, b"L" * 16]            # the silent one and the real peer each got its message
    assert (folder / "theirs.bin").read_bytes() == b"P" * 16
