"""TCP between two local processes: C host to C host, C host to the reference
interpreter (either side), the platform's ordered combine, a port in use, a peer that
closes early and one that never comes -- statuses and messages as documented."""
from __future__ import annotations

import os
import socket
import struct
import subprocess
import threading

import pytest

from native_helpers import PLANS, load_module, program_bytes, run_reference, write_host


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@pytest.fixture
def peers(tmp_path):
    """The Native.Peers programs for a free port: name -> (canonical bytes, built host)."""
    port = free_port()
    folder = tmp_path / "plans" / "Native"
    folder.mkdir(parents=True)
    for name in ("Short.bob", "Peers.bob"):
        text = (PLANS / "Native" / name).read_text()
        (folder / name).write_text(text.replace("def peerPort : Nat = 40000", f"def peerPort : Nat = {port}"))
    program = load_module(folder / "Peers.bob")
    built = {}
    for name in ("listener", "connector", "quitter", "combiner0", "combiner1"):
        code = program_bytes(program, name)
        built[name] = (code, write_host(tmp_path, name, code))
    built["port"] = port
    return built


def start(host, folder, arguments, env=None):
    environ = {**os.environ, "NATIVE_DEVICE": "memory", **(env or {})}
    return subprocess.Popen([str(host), *arguments], cwd=folder, env=environ, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE)


def folder_with(tmp_path, name, files):
    folder = tmp_path / name
    folder.mkdir()
    for file_name, data in files.items():
        (folder / file_name).write_bytes(data)
    return folder


def test_two_c_hosts_exchange(peers, tmp_path):
    a = folder_with(tmp_path, "a", {"mine.bin": b"A" * 16})
    b = folder_with(tmp_path, "b", {"mine.bin": b"B" * 16})
    listener = start(peers["listener"][1], a, ["mine.bin", "theirs.bin"])
    connector = start(peers["connector"][1], b, ["mine.bin", "theirs.bin"])
    assert connector.wait(30) == 0, connector.stderr.read()
    assert listener.wait(30) == 0, listener.stderr.read()
    assert (a / "theirs.bin").read_bytes() == b"B" * 16
    assert (b / "theirs.bin").read_bytes() == b"A" * 16


def test_native_profile_times_each_send_and_receive(peers, tmp_path):
    """NATIVE_PROFILE=1 (runtime_c/native_device.h): at exit a line per series, each Send and
    Receive with its count (a Submit's wait is one series per ring entry: the GPU tests')."""
    a = folder_with(tmp_path, "a", {"mine.bin": b"A" * 16})
    b = folder_with(tmp_path, "b", {"mine.bin": b"B" * 16})
    listener = start(peers["listener"][1], a, ["mine.bin", "theirs.bin"], {"NATIVE_PROFILE": "1"})
    connector = start(peers["connector"][1], b, ["mine.bin", "theirs.bin"], {"NATIVE_PROFILE": "1"})
    assert connector.wait(30) == 0 and listener.wait(30) == 0
    for process in (listener, connector):
        lines = process.stderr.read().decode().splitlines()
        series = {line.split("  n ")[0].removeprefix("native: profile: ").strip(): int(line.split("  n ")[1].split()[0])
                  for line in lines if line.startswith("native: profile: ")}
        assert series.get("send", 0) >= 1 and series.get("receive", 0) >= 1, lines


@pytest.mark.parametrize("reference_side", ["listener", "connector"])
def test_c_host_and_reference_exchange(peers, tmp_path, reference_side):
    c_side = "connector" if reference_side == "listener" else "listener"
    c_folder = folder_with(tmp_path, "c", {"mine.bin": b"C" * 16})
    r_folder = folder_with(tmp_path, "r", {"mine.bin": b"R" * 16})
    outcome = {}
    thread = threading.Thread(target=lambda: outcome.update(
        r=run_reference(peers[reference_side][0], r_folder, ["mine.bin", "theirs.bin"])))
    thread.start()
    process = start(peers[c_side][1], c_folder, ["mine.bin", "theirs.bin"])
    assert process.wait(30) == 0, process.stderr.read()
    thread.join(30)
    assert outcome["r"].status == 0, outcome["r"].stderr
    assert (c_folder / "theirs.bin").read_bytes() == b"R" * 16
    assert (r_folder / "theirs.bin").read_bytes() == b"C" * 16


def test_ordered_combine_gives_both_the_same_bits(peers, tmp_path):
    partial0, partial1 = 0.1, 1e16      # order matters: (0.1 + 1e16) is not 1e16 + 0.1 read backwards
    folders = [folder_with(tmp_path, f"w{w}", {"own.bin": struct.pack("<d", p)})
               for w, p in enumerate((partial0, partial1))]
    processes = [start(peers[f"combiner{w}"][1], folders[w], ["own.bin", "sum.bin"]) for w in (0, 1)]
    for process in processes:
        assert process.wait(30) == 0, process.stderr.read()
    sums = [(folder / "sum.bin").read_bytes() for folder in folders]
    assert sums[0] == sums[1] == struct.pack("<d", partial0 + partial1)


def test_port_in_use_is_refused_by_name(peers, tmp_path):
    holder = socket.socket()
    holder.bind(("127.0.0.1", peers["port"]))
    holder.listen(1)
    try:
        folder = folder_with(tmp_path, "a", {"mine.bin": b"A" * 16})
        process = start(peers["listener"][1], folder, ["mine.bin", "theirs.bin"])
        assert process.wait(30) == 5
        message = process.stderr.read()
        r_folder = folder_with(tmp_path, "r", {"mine.bin": b"A" * 16})
        reference = run_reference(peers["listener"][0], r_folder, ["mine.bin", "theirs.bin"])
    finally:
        holder.close()
    expected = (f"native: command 0 (Connect): port in use: cannot listen at 127.0.0.1:{peers['port']} (another "
                f"process holds it); stop it or give the pair another port; nothing was published\n").encode()
    assert message == expected
    assert reference.status == 5 and reference.stderr == expected
    assert not (folder / "theirs.bin").exists()


def test_peer_closing_early(peers, tmp_path):
    folder = folder_with(tmp_path, "a", {"mine.bin": b"A" * 16})
    listener = start(peers["listener"][1], folder, ["mine.bin", "theirs.bin"])
    quitter = start(peers["quitter"][1], tmp_path, [])
    assert quitter.wait(30) == 0, quitter.stderr.read()
    assert listener.wait(30) == 5
    message = listener.stderr.read()
    assert message.startswith(f"native: command 3 (Receive): peer 127.0.0.1:{peers['port']} closed the connection "
                              f"(0 of 16 bytes received)".encode()) or \
        message.startswith(f"native: command 2 (Send): peer 127.0.0.1:{peers['port']} closed".encode()), message
    assert not (folder / "theirs.bin").exists()


def test_peer_that_never_comes(peers, tmp_path):
    env = {"NATIVE_PEER_TIMEOUT_MS": "300"}
    folder = folder_with(tmp_path, "a", {"mine.bin": b"A" * 16})
    process = start(peers["listener"][1], folder, ["mine.bin", "theirs.bin"], env)
    assert process.wait(30) == 5
    expected = (f"native: command 0 (Connect): no peer connected to 127.0.0.1:{peers['port']} within 300 ms; start "
                f"the other peer (or raise NATIVE_PEER_TIMEOUT_MS); nothing was published\n").encode()
    assert process.stderr.read() == expected
    reference = run_reference(peers["listener"][0], folder_with(tmp_path, "r", {"mine.bin": b"A" * 16}),
                              ["mine.bin", "theirs.bin"], env)
    assert reference.status == 5 and reference.stderr == expected
    connector = start(peers["connector"][1], folder, ["mine.bin", "theirs.bin"], env)
    assert connector.wait(30) == 5
    assert f"could not connect to 127.0.0.1:{peers['port']} within 300 ms".encode() in connector.stderr.read()
