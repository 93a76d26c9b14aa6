"""What a built seed-003 worker says at bring-up (probe s27, findings 10 and 11): on a machine
without a GPU the connecting worker's OpenDevice failure is its one line (no wait for the
listening peer's GPU context, no note about taking a context of its own before "no GPU"); the listening worker's likewise; and its telemetry lines are text (the seed's
64-byte identity, padded with NULs, printed up to its first NUL)."""
from __future__ import annotations

import os
import re
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from peers import hello, run_beside_worker0, words

REPOSITORY = Path(__file__).resolve().parents[2]
EXAMPLE = REPOSITORY / "examples/partitioned_regression"
ARGUMENTS = ("manifest", "w0", "a0", "w1", "a1", "readback")
NO_GPU = not os.path.exists("/dev/nvidiactl")


@pytest.fixture(scope="module")
def workers(tmp_path_factory, port) -> dict:
    """Both workers, built for the run's own port (conftest.py `port`)."""
    folder = tmp_path_factory.mktemp("pr-bring-up")
    uuid = "".join(f"\\x{b:02x}" for b in bytes(range(16)))
    (folder / "Pair.bob").write_text("module Pair\n\nimport PartitionedRegression.Build.Workers\n\n" + "".join(
        f'def worker{w} : Bytes = (coordinateH200Worker b"{uuid}" 0 {w} {port} 0 1 4)\n' for w in (0, 1)))
    built = {}
    for w in (0, 1):
        done = subprocess.run([sys.executable, "-m", "bobc", "build", str(folder / "Pair.bob"), "--entry",
                               f"worker{w}", "--target", "sm_90", "-I", str(EXAMPLE), "-o", str(folder / f"worker{w}")],
                              capture_output=True, text=True, timeout=300)
        assert done.returncode == 0, done.stderr
        built[w] = folder / f"worker{w}"
    return built


def environment(**settings) -> dict:
    environ = {k: v for k, v in os.environ.items() if not k.startswith(("NATIVE_", "BOBC_GPU_"))}
    return {**environ, "NATIVE_PEER_TIMEOUT_MS": "5000", **settings}


def record(folder: Path) -> Path:
    path = folder / "record.bin"
    path.write_bytes(bytes(32 + 16 * 4096))
    return path


def run_worker1(host: Path, port: int, folder: Path, environ: dict):
    """Worker 1 (the connecting peer) beside a stand-in worker 0 (peers.py)."""
    arguments = [str(folder / name) for name in ARGUMENTS] + [str(record(folder))]
    return run_beside_worker0(port, [str(host), *arguments], capture_output=True, timeout=60, env=environ)


@pytest.mark.skipif(not NO_GPU, reason="a machine without an NVIDIA driver (/dev/nvidiactl absent)")
def test_the_connecting_worker_says_no_gpu_once(workers, port, tmp_path):
    """One line: the OpenDevice failure, nothing about the peer's GPU context before it."""
    done = run_worker1(workers[1], port, tmp_path, environment())
    lines = done.stderr.decode().splitlines()
    assert done.returncode == 3, done.stderr
    assert len(lines) == 1 and re.fullmatch(r"native: command \d+ \(OpenDevice\): no GPU: /dev/nvidiactl does not "
                                            r"exist \(no NVIDIA driver loaded\); nothing was published", lines[0]), lines
    assert not (tmp_path / "w1").exists()


@pytest.mark.skipif(not NO_GPU, reason="a machine without an NVIDIA driver (/dev/nvidiactl absent)")
def test_the_listening_worker_says_no_gpu_once(workers, port, tmp_path):
    arguments = [str(tmp_path / name) for name in ARGUMENTS] + [str(record(tmp_path))]
    process = subprocess.Popen([str(workers[0]), *arguments], stderr=subprocess.PIPE, env=environment())
    deadline = time.monotonic() + 120          # a hang guard: a loaded machine starts processes slowly
    while True:         # the listening worker's peer: connect, then close once it has exited
        try:
            peer = socket.create_connection(("127.0.0.1", port), timeout=1)
            break
        except OSError:
            assert time.monotonic() < deadline and process.poll() is None, "worker 0 never listened"
            time.sleep(0.02)
    with peer:
        peer.sendall(hello(1, words(workers[0])))          # worker 1's side of the exchange
        _, stderr = process.communicate(timeout=30)
    lines = stderr.decode().splitlines()
    assert process.returncode == 3 and len(lines) == 1 and "(OpenDevice): no GPU: /dev/nvidiactl" in lines[0], lines


def test_telemetry_lines_carry_no_nul(workers, port, tmp_path):
    done = run_worker1(workers[1], port, tmp_path, environment(NATIVE_DEVICE="memory", NATIVE_TELEMETRY="9"))
    assert b"\0" not in done.stderr, done.stderr
    telemetry = [line for line in done.stderr.decode().splitlines() if line.startswith("native: telemetry ")]
    assert telemetry and all(re.fullmatch(r"native: telemetry [\w.-]+ \+\d+ us", line) for line in telemetry), telemetry
