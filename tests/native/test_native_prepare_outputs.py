"""PrepareOutputs (code 36, docs/platform.md): publication's first phase.  A program's outputs are
written to their synced temporaries at the command, a failure to write them is that command's
(status 8, the output named, nothing published), the program goes on (tells its peer), and its
end only renames them; any later failure removes them.  The C host (NATIVE_DEVICE=memory) and the
reference interpreter give the same statuses, files and messages, byte for byte."""
from __future__ import annotations

import os
import re
import resource
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from native_helpers import PLANS, load_module, program_bytes, run_sides, write_host

REPOSITORY = Path(__file__).resolve().parents[2]
REFERENCE = ("import sys\nfrom bobc.reference.native_program import run_program\n"
             "sys.exit(run_program(open(sys.argv[1], 'rb').read(), sys.argv[3:], name=sys.argv[2]))\n")


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@pytest.fixture(scope="module")
def prepared(tmp_path_factory):
    """Native.Prepared's programs for two free ports: name -> (canonical bytes, built C host, code file)."""
    root = tmp_path_factory.mktemp("prepared")
    ports = free_port(), free_port()
    folder = root / "plans" / "Native"
    folder.mkdir(parents=True)
    (folder / "Short.bob").write_text((PLANS / "Native" / "Short.bob").read_text())
    text = (PLANS / "Native" / "Prepared.bob").read_text()
    text = text.replace("def listenPort : Nat = 40001", f"def listenPort : Nat = {ports[0]}")
    (folder / "Prepared.bob").write_text(text.replace("def connectPort : Nat = 40002",
                                                      f"def connectPort : Nat = {ports[1]}"))
    program = load_module(folder / "Prepared.bob")
    built = {"ports": ports}
    for name in ("prepared0", "prepared1", "preparedAlone", "preparedThenFails", "preparedThenWritten"):
        code = program_bytes(program, name)
        (root / f"{name}.nphy").write_bytes(code)
        built[name] = (code, write_host(root, name, code), root / f"{name}.nphy")
    return built


def start(prepared, name, side, folder, arguments, **options):
    """Program `name` as a process in `folder`: its C host, or the reference interpreter."""
    code, host, code_file = prepared[name]
    environ = {**os.environ, "NATIVE_DEVICE": "memory", "NATIVE_PEER_TIMEOUT_MS": "5000",
               "PYTHONPATH": str(REPOSITORY / "compiler")}
    command = [str(host)] if side == "c" else [sys.executable, "-c", REFERENCE, str(code_file), name]
    return subprocess.Popen([*command, *arguments], cwd=folder, env=environ, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, **options)


def receive(sock, count):
    data = b""
    while len(data) < count:
        chunk = sock.recv(count - len(data))
        if not chunk:
            break
        data += chunk
    return data


def relay(listen_port, target_port, hold):
    """Worker 1 connects here; the relay connects to worker 0 and passes worker 1's first message
    on, then waits for worker 0's first message and its PREPARED, calls `hold()`, passes worker
    0's first message on, and closes both sides once worker 1 has gone."""
    server = socket.socket()
    server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    server.bind(("127.0.0.1", listen_port))
    server.listen(1)
    seen = {}

    def work():
        one, _ = server.accept()
        zero = None
        for _ in range(500):
            try:
                zero = socket.create_connection(("127.0.0.1", target_port))
                break
            except OSError:
                time.sleep(0.02)
        zero.sendall(receive(one, 16))
        seen["zero"] = receive(zero, 24)
        hold()
        one.sendall(seen["zero"][:16])
        seen["one after"] = receive(one, 8)         # nothing: worker 1 ends without a PREPARED
        zero.close()
        one.close()
        server.close()

    thread = threading.Thread(target=work, daemon=True)
    thread.start()
    return thread, seen


def temporaries(folder: Path) -> list:
    return sorted(p.name for p in folder.rglob("*") if ".tmp-" in p.name or "journal" in p.name)


def test_a_prepared_pair_publishes_both_outputs_and_leaves_no_temporary(prepared, tmp_path):
    # worker 0 a C host, worker 1 the reference, a plain relay between them
    port = prepared["ports"][0]
    folders = []
    processes = []
    for worker in range(2):
        folder = tmp_path / f"w{worker}"
        folder.mkdir()
        (folder / "mine.bin").write_bytes(bytes([65 + worker]) * 16)
        folders.append(folder)
    processes.append(start(prepared, "prepared0", "c", folders[0], ["mine.bin", "theirs.bin", "own.bin"]))
    # worker 1 built for the relay's port: forward it byte for byte
    forward = socket.socket()
    forward.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    forward.bind(("127.0.0.1", prepared["ports"][1]))
    forward.listen(1)

    def pipe():
        one, _ = forward.accept()
        for _ in range(500):
            try:
                zero = socket.create_connection(("127.0.0.1", port))
                break
            except OSError:
                time.sleep(0.02)
        zero.sendall(receive(one, 16))
        one.sendall(receive(zero, 24))
        zero.sendall(receive(one, 8))
        zero.close(), one.close(), forward.close()

    threading.Thread(target=pipe, daemon=True).start()
    processes.append(start(prepared, "prepared1", "reference", folders[1], ["mine.bin", "theirs.bin", "own.bin"]))
    for process in processes:
        assert process.wait(60) == 0, process.stderr.read()
    assert (folders[0] / "theirs.bin").read_bytes() == b"B" * 16 and (folders[0] / "own.bin").read_bytes() == b"A" * 16
    assert (folders[1] / "theirs.bin").read_bytes() == b"A" * 16 and (folders[1] / "own.bin").read_bytes() == b"B" * 16
    assert temporaries(tmp_path) == []


def run_split(prepared, tmp_path, side):
    """Worker 0 and worker 1 (both on `side`) where worker 1's output folder is moved away after
    worker 0 prepared and said so, before worker 1 prepares: (statuses, stderrs, folders)."""
    base = tmp_path / side
    zero, one = base / "w0", base / "w1" / "sub"
    zero.mkdir(parents=True)
    one.mkdir(parents=True)
    for folder, mine in ((zero, b"A"), (one.parent, b"B")):
        (folder / "mine.bin").write_bytes(mine * 16)
    (zero / "theirs.bin").write_bytes(b"previous theirs 0")
    (zero / "own.bin").write_bytes(b"previous own 0")
    (one / "theirs.bin").write_bytes(b"previous theirs 1")
    (one / "own.bin").write_bytes(b"previous own 1")
    thread, seen = relay(prepared["ports"][1], prepared["ports"][0], lambda: one.rename(base / "w1" / "moved"))
    processes = [start(prepared, "prepared0", side, zero, ["mine.bin", "theirs.bin", "own.bin"])]
    processes.append(start(prepared, "prepared1", side, one.parent, ["mine.bin", "sub/theirs.bin", "sub/own.bin"]))
    outcome = [(p.wait(60), p.stderr.read()) for p in processes]
    thread.join(10)
    assert seen["zero"][16:] == b"PREPARED" and seen["one after"] == b""
    return outcome, base


def test_a_peer_that_cannot_prepare_ends_both_and_neither_publishes(prepared, tmp_path):
    outcomes = {}
    for side in ("c", "reference"):
        ((status0, said0), (status1, said1)), base = run_split(prepared, tmp_path, side)
        assert status1 == 8, said1
        assert said1 == (b"native: command 6 (PrepareOutputs): output sub/theirs.bin (argument 1): cannot create a "
                         b"temporary file in sub: No such file or directory; nothing was published\n")
        assert status0 == 5, said0
        assert said0.startswith(b"native: command 9 (Receive): peer 127.0.0.1:") and b"closed the connection at message 2 from " \
            b"it (0 of 8 bytes received); the other peer stopped: see its messages for why, then start both again" in said0 and said0.endswith(b"nothing was published\n"), said0
        # the previous files, byte for byte, and no temporary anywhere
        assert (base / "w0" / "theirs.bin").read_bytes() == b"previous theirs 0"
        assert (base / "w0" / "own.bin").read_bytes() == b"previous own 0"
        assert (base / "w1" / "moved" / "theirs.bin").read_bytes() == b"previous theirs 1"
        assert (base / "w1" / "moved" / "own.bin").read_bytes() == b"previous own 1"
        assert temporaries(base) == []
        # the peer is named by the address it connected from (an ephemeral port of its own each run)
        outcomes[side] = (status0, re.sub(rb"peer 127\.0\.0\.1:\d+", b"peer 127.0.0.1:PORT", said0), status1, said1)
    assert outcomes["c"] == outcomes["reference"]


def test_a_failure_after_prepare_publishes_nothing(prepared, tmp_path):
    code, host, _ = prepared["preparedThenFails"]
    c, reference = run_sides(tmp_path, code, host, {"in.bin": b"N" * 16, "out.bin": b"previous"},
                             ["in.bin", "out.bin"], name="fails", reference_name=str(host))
    assert c.status == reference.status == 5
    assert c.stderr == reference.stderr == b"native: command 3 (Fail): the peer said no; nothing was published\n"
    assert c.files == reference.files == {"in.bin": b"N" * 16, "out.bin": b"previous"}      # no temporary either


def test_an_output_written_after_it_was_prepared_is_refused(prepared, tmp_path):
    code, host, _ = prepared["preparedThenWritten"]
    c, reference = run_sides(tmp_path, code, host, {"in.bin": b"N" * 16}, ["in.bin", "out.bin"], name="written",
                             reference_name=str(host))
    assert c.status == reference.status == 1
    assert c.stderr == reference.stderr == (
        b"native: command 3 (WriteFile): argument 1 was prepared for publication already (PrepareOutputs): a "
        b"program writes an output before it prepares it; nothing was published\n")
    assert c.files == reference.files == {"in.bin": b"N" * 16}


def test_a_prepared_output_is_published_at_the_end(prepared, tmp_path):
    code, host, _ = prepared["preparedAlone"]
    c, reference = run_sides(tmp_path, code, host, {"in.bin": b"N" * 16, "out.bin": b"previous"},
                             ["in.bin", "out.bin"], name="alone", reference_name=str(host))
    assert c.status == reference.status == 0 and c.stderr == reference.stderr == b""
    assert c.files == reference.files == {"in.bin": b"N" * 16, "out.bin": b"N" * 16}


def _limit_file_size():
    # SIGXFSZ keeps its default disposition (subprocess restores it), as a batch scheduler's
    # RLIMIT_FSIZE finds a host: the host itself ignores it, so its write fails with EFBIG and is
    # refused, never a silent kill (probe s33 resources finding 4)
    resource.setrlimit(resource.RLIMIT_FSIZE, (8, 8))


def test_a_temporary_that_cannot_be_written_fails_at_prepare_naming_the_output(prepared, tmp_path):
    said = {}
    for side in ("c", "reference"):
        folder = tmp_path / side
        folder.mkdir()
        (folder / "in.bin").write_bytes(b"N" * 16)
        (folder / "out.bin").write_bytes(b"previous")
        process = start(prepared, "preparedAlone", side, folder, ["in.bin", "out.bin"], preexec_fn=_limit_file_size)
        said[side] = (process.wait(60), process.stderr.read())
        assert (folder / "out.bin").read_bytes() == b"previous" and temporaries(folder) == []
    assert said["c"] == said["reference"] == (8, (
        b"native: command 2 (PrepareOutputs): output out.bin (argument 1): write of the temporary file failed: File "
        b"too large (the file size limit, ulimit -f, is 8 bytes: raise it, then run again); nothing was published\n"))
