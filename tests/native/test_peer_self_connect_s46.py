"""A connecting endpoint whose attempt connects to itself (probe s46 partreg2, finding 1).

When nothing listens at a port of this machine, Linux may give a connect() to it that very port
as its source port: it picks source ports from ip_local_port_range (32768-60999 by default),
which holds seed 003's ports (the docs' 47611).  The SYN then meets its own socket, a TCP
simultaneous open, and the connect succeeds, to itself.  Seed 003's worker 1, started before
worker 0 listened, retries every 20 ms, so with a raised NATIVE_PEER_TIMEOUT_MS (a peer started
long before the other) this comes about (a loop of refused connects to an even port here did after
22,257 attempts; deterministic in a network namespace whose range is that port).  Before, the
connecting peer took the socket as its peer: it heard nothing ("peer 127.0.0.1:P sent nothing for
N ms") and held the port, so worker 0 started meanwhile ended "port in use: cannot listen at
127.0.0.1:P (another process holds it)" -- both status 5, neither message saying why.

Here the case is made every time: each attempt made while nothing listens is first bound to the
port it connects to (as the kernel's choice would bind it).  The expected outcome is the
listener's own greeting received over a connection whose local and remote addresses differ,
checked with getsockname/getpeername, not read from either executor."""
from __future__ import annotations

import shutil
import socket
import subprocess
import threading
import time
from pathlib import Path

from bobc.reference import native_program as reference

RUNTIME = Path(__file__).resolve().parents[2] / "runtime_c"
GREETING = b"HELLO"


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def test_the_c_endpoint_drops_a_connection_to_itself_and_pairs_with_the_listener_s46(tmp_path):
    """runtime_c/tests/peer_self_connect.c: np_peer_open with connect() wrapped to bind each
    attempt to its destination's port first, a listener starting 300 ms later."""
    gcc = shutil.which("gcc") or shutil.which("cc")
    harness = tmp_path / "peer_self_connect"
    built = subprocess.run([gcc, "-O1", "-std=c11", "-Wall", "-Wextra", "-Werror", f"-I{RUNTIME}", "-D_DEFAULT_SOURCE",
                            str(RUNTIME / "tests/peer_self_connect.c"), str(RUNTIME / "native_peer.c"),
                            "-Wl,--wrap=connect", "-o", str(harness), "-lpthread"],
                           capture_output=True, text=True, timeout=120)
    assert built.returncode == 0, built.stderr
    ran = subprocess.run([str(harness), str(free_port())], capture_output=True, text=True, timeout=60)
    assert ran.returncode == 0, ran.stdout + ran.stderr
    assert ran.stdout.startswith("ok: "), ran.stdout


class SelfBinding(socket.socket):
    """A socket whose connect first binds it to the address it connects to (while nothing listens
    there that succeeds, and the connect is a simultaneous open with itself)."""
    self_binds = 0

    def connect(self, address):
        self.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            self.bind(address)
            SelfBinding.self_binds += 1
        except OSError:                   # the listener holds the port: an ordinary connect
            pass
        return super().connect(address)


def test_the_reference_endpoint_drops_a_connection_to_itself_and_pairs_with_the_listener_s46(monkeypatch):
    """bobc's reference runner's Peer (the C endpoint's twin) under the same attempts."""
    plain = socket.socket
    port = free_port()
    heard = []

    def listen_later():
        time.sleep(0.3)
        deadline = time.monotonic() + 2
        while True:                       # an attempt may hold the port for a moment
            server = plain(socket.AF_INET, socket.SOCK_STREAM)
            server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            try:
                server.bind(("127.0.0.1", port))
                server.listen(4)
                break
            except OSError:
                server.close()
                if time.monotonic() > deadline:
                    heard.append("the listener could not bind its port")
                    return
                time.sleep(0.02)
        with server:
            server.settimeout(5)
            try:
                connection, _ = server.accept()
            except socket.timeout:
                heard.append("nobody connected to the listener")
                return
            with connection:
                connection.sendall(GREETING)
                connection.settimeout(5)
                try:
                    while connection.recv(16):
                        pass
                except OSError:
                    pass
            heard.append("greeted")

    SelfBinding.self_binds = 0
    monkeypatch.setattr(socket, "socket", SelfBinding)
    listener = threading.Thread(target=listen_later, daemon=True)
    listener.start()
    address = bytes([2, 0, port >> 8, port & 0xFF, 127, 0, 0, 1]) + bytes(8)
    peer = reference.Peer(address, False, 5000)
    try:
        local, remote = peer.socket.getsockname(), peer.socket.getpeername()
        assert local != remote, f"the endpoint connected to itself ({local})"
        assert peer.receive(len(GREETING), 3000) == GREETING
    finally:
        peer.close()
        listener.join(10)
    assert SelfBinding.self_binds >= 1, "no attempt connected to itself: the case was not exercised"
    assert heard == ["greeted"], heard
