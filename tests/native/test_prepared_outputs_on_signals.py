"""`bobc run ... native --reference`: SIGTERM and SIGHUP, like SIGINT, remove what PrepareOutputs
wrote (probe s31 signals finding 4; docs/runtime.md, "Files": "any failure, and SIGINT, SIGTERM or
SIGHUP, removes them", as the C host does).  Before, both killed bobc at once and the prepared
`.NAME.tmp-*` files stayed."""
from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from native_helpers import PLANS

REPOSITORY = Path(__file__).resolve().parents[2]
ENDED = {signal.SIGINT: (130, b"bobc: interrupted\n"), signal.SIGTERM: (143, b"bobc: terminated\n"),
         signal.SIGHUP: (129, b"bobc: hung up\n")}


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@pytest.mark.parametrize("number", [signal.SIGTERM, signal.SIGHUP, signal.SIGINT])
def test_a_signal_while_prepared_removes_the_prepared_files(tmp_path, number):
    port = free_port()
    plans = tmp_path / "Native"
    plans.mkdir()
    (plans / "Short.bob").write_text((PLANS / "Native" / "Short.bob").read_text())
    (plans / "Prepared.bob").write_text((PLANS / "Native" / "Prepared.bob").read_text().replace(
        "def listenPort : Nat = 40001", f"def listenPort : Nat = {port}"))
    work = tmp_path / "w0"
    work.mkdir()
    before = {"mine.bin": b"A" * 16, "theirs.bin": b"previous theirs", "own.bin": b"previous own"}
    for name, data in before.items():
        (work / name).write_bytes(data)
    run = subprocess.Popen([sys.executable, "-m", "bobc", "run", str(plans / "Prepared.bob"), "native", "mine.bin",
                            "theirs.bin", "own.bin", "--reference", "--entry", "prepared0"], cwd=work,
                           env={**os.environ, "PYTHONPATH": str(REPOSITORY / "compiler"), "TMPDIR": str(tmp_path)},
                           stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                           preexec_fn=lambda: [signal.signal(n, signal.SIG_DFL) for n in ENDED])
    peer = None
    try:
        deadline = time.monotonic() + 120
        while peer is None:         # the peer: its 16 bytes, then the run's 16 and PREPARED; never its own PREPARED
            assert run.poll() is None, run.stderr.read()
            assert time.monotonic() < deadline, "the run never listened"
            try:
                peer = socket.create_connection(("127.0.0.1", port))
            except OSError:
                time.sleep(0.02)
        peer.sendall(b"B" * 16)
        got = b""
        while len(got) < 24:
            chunk = peer.recv(24 - len(got))
            assert chunk, "the run closed the connection"
            got += chunk
        assert got.endswith(b"PREPARED")
        assert sorted(n.split(".tmp-")[0] for n in os.listdir(work) if ".tmp-" in n) == [".own.bin", ".theirs.bin"]
        run.send_signal(number)
        code, line = ENDED[number]
        assert run.wait(timeout=120) == code
        assert run.stderr.read() == line
        assert {p.name: p.read_bytes() for p in work.iterdir()} == before      # nothing published, nothing left
    finally:
        if peer is not None:
            peer.close()
        if run.poll() is None:
            run.kill()
            run.wait()
        run.stderr.close()
