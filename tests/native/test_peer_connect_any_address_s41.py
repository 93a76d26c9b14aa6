"""A connecting endpoint built with 0.0.0.0 (probe s41 peerfaults finding 2).  0.0.0.0 is a
listening address (seed 003's worker 0 may take it to listen on every interface); Linux's
connect(2) to it reaches this machine only, so a worker 1 built with it on another node than
worker 0 can never pair.  Before, both executors said "nothing listens there: the other peer was
not started, ...; start it", sending the operator to look at a peer that was running all along.
Now the message says what 0.0.0.0 reaches and what to build instead.  Nothing listens at the port
(bind(0) gave it and it was released), the independent fact the expected status rests on."""
from __future__ import annotations

import os
import socket
import subprocess

import pytest

from native_helpers import PLANS, load_module, program_bytes, run_reference, write_host


@pytest.fixture
def connector(tmp_path):
    """Native.Peers' connector built to connect to 0.0.0.0 at a port nothing listens at."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    folder = tmp_path / "plans" / "Native"
    folder.mkdir(parents=True)
    for name in ("Short.bob", "Peers.bob"):
        text = (PLANS / "Native" / name).read_text()
        text = text.replace("def peerPort : Nat = 40000", f"def peerPort : Nat = {port}")
        (folder / name).write_text(text.replace('b"\\x7f\\x00\\x00\\x01', 'b"\\x00\\x00\\x00\\x00'))
    code = program_bytes(load_module(folder / "Peers.bob"), "connector")
    return code, write_host(tmp_path, "connector", code), port


@pytest.mark.parametrize("executor", ["c", "reference"])
def test_connecting_to_0_0_0_0_says_it_reaches_this_machine_only(connector, tmp_path, executor):
    code, host, port = connector
    folder = tmp_path / "run"
    folder.mkdir()
    (folder / "mine.bin").write_bytes(b"C" * 16)
    environment = {"NATIVE_DEVICE": "memory", "NATIVE_PEER_TIMEOUT_MS": "300"}
    if executor == "c":
        done = subprocess.run([str(host), "mine.bin", "theirs.bin"], cwd=folder, capture_output=True, timeout=30,
                              env={**os.environ, **environment})
        status, stderr = done.returncode, done.stderr
    else:
        outcome = run_reference(code, folder, ["mine.bin", "theirs.bin"], env=environment)
        status, stderr = outcome.status, outcome.stderr
    assert status == 5, stderr
    assert (f"could not connect to 0.0.0.0:{port} within 300 ms (nothing listens there on this machine: 0.0.0.0 is "
            "a listening address, and connecting to it reaches this machine only; for a peer on another machine, "
            "build this one with that machine's address, else start the other peer here) (or raise "
            "NATIVE_PEER_TIMEOUT_MS); nothing was published").encode() in stderr, stderr
    assert not (folder / "theirs.bin").exists()
