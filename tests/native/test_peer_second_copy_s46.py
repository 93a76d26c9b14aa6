"""A second copy of a connecting peer, queued behind the first (probe s46 partreg2, finding 5).

Seed 003's worker 1 started twice against one worker 0 (two terminals, a retry loop): worker 0
keeps its listening socket open until its peer's first byte (docs/native-host.md, "Endpoints"), so
the second copy's connection waits queued; once the first copy answers, worker 0 closes the
listening socket and the queued connection is reset.  The second copy then said "peer A closed the
connection at message 1 from it (0 of 56 bytes received); the other peer stopped: see its messages
for why, then start both again" -- while worker 0 trained on with the first copy.  A connecting
endpoint whose listener closed before sending it a byte now says both things that can be:
the listener stopped, or it took another connection as its peer.

The listener here is scripted (it accepts a first connection of its own, waits until the host's
connection is queued behind it, then closes its listening socket); the host is Native.Peers'
connector (receives 16 bytes first), both executors."""
from __future__ import annotations

import os
import select
import socket
import subprocess
import threading
import time

import pytest

from native_helpers import peer_host_at_own_port, run_reference

UNHEARD = ("the other peer stopped before it sent anything, or it took another connection as its peer (a second "
           "copy of this peer, started against it: the first trains on); see its messages for why, then start both "
           "again")


@pytest.fixture
def connector(tmp_path):
    """Native.Peers' connector built for a port of this test's own."""
    return peer_host_at_own_port(tmp_path, "connector")


def paired_elsewhere(listener: socket.socket, first: socket.socket, queued: threading.Event) -> None:
    """Take `first` as the peer: once another connection waits queued, stop listening (a seed 003
    worker 0 confirming its worker 1), which resets the queued one."""
    accepted, _ = listener.accept()
    with accepted:
        if select.select([listener], [], [], 30)[0]:
            queued.set()
        # its connect has completed (it is queued); a moment for the host's connect call to return
        # with it, as a second copy's does long before the first answers (a reset before that
        # call returns is a refused attempt, retried)
        time.sleep(1)
        listener.close()
        accepted.sendall(b"F" * 16)
        first.recv(16)


@pytest.mark.parametrize("executor", ["c", "reference"])
def test_a_second_copy_reset_in_the_queue_is_told_its_listener_may_be_paired_s46(connector, tmp_path, executor):
    code, host, port = connector
    folder = tmp_path / "run"
    folder.mkdir()
    (folder / "mine.bin").write_bytes(b"C" * 16)
    listener = socket.socket()
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind(("127.0.0.1", port))
    listener.listen(4)
    first = socket.create_connection(("127.0.0.1", port), timeout=30)
    queued = threading.Event()
    scripted = threading.Thread(target=paired_elsewhere, args=(listener, first, queued), daemon=True)
    scripted.start()
    environment = {"NATIVE_DEVICE": "memory", "NATIVE_PEER_TIMEOUT_MS": "20000"}
    try:
        if executor == "c":
            done = subprocess.run([str(host), "mine.bin", "theirs.bin"], cwd=folder, capture_output=True,
                                  env={**os.environ, **environment}, timeout=60)
            status, stderr = done.returncode, done.stderr
        else:
            outcome = run_reference(code, folder, ["mine.bin", "theirs.bin"], env=environment)
            status, stderr = outcome.status, outcome.stderr
    finally:
        scripted.join(30)
        first.close()
    assert queued.is_set(), "the host's connection never waited queued behind the first"
    assert status == 5, stderr
    text = stderr.decode()
    assert f"peer 127.0.0.1:{port} closed the connection at message 1 from it (0 of 16 bytes received); " \
           f"{UNHEARD}; nothing was published" in text, text
    assert not (folder / "theirs.bin").exists()
