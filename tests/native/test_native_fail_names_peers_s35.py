"""Probe s35 nativeloc finding 3: a plan's refusal of what a peer sent (seed 003's "coordinate
peer: malformed first message ...") did not say which peer sent it: a Fail's message is bytes fixed
when the host is built, and worker 0 accepts a connection from anywhere.  Now a Fail in a program
connected to peers names them, as the hosts' own peer messages do -- the address a listening
side's peer came from, the one a connecting side connected to -- the same words from the C host
and the reference: `native: command 2 (Fail; peer 127.0.0.1:51234): ...`."""
from __future__ import annotations

import io
import socket
import subprocess
import threading
import time

from test_native_bounds_s34 import field, nat, program

CONNECT, RECEIVE, FAIL = 19, 21, 2


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def sockaddr(port: int) -> bytes:
    return b"\x02\x00" + port.to_bytes(2, "big") + bytes([127, 0, 0, 1]) + bytes(8)


def connect(port: int, listen: int, slot: int) -> bytes:
    return bytes([CONNECT]) + field(sockaddr(port)) + nat(listen) + nat(slot)


def fail(status: int, message: bytes) -> bytes:
    return bytes([FAIL]) + nat(status) + field(message)


def both(tmp_path, code: bytes, peer) -> list:
    """(status, stderr, what the peer saw) from the C host and from the reference, each run against
    `peer(done)` in a thread (it returns what the message should name)."""
    from bobc.native.artifact import trailer
    from bobc.native.interpreter import interpreter_bytes
    from bobc.reference.native_program import run_program

    host = tmp_path / "host"
    host.write_bytes(interpreter_bytes() + trailer(code, "sm_90"))
    host.chmod(0o755)
    environ = {"NATIVE_DEVICE": "memory", "NATIVE_PEER_TIMEOUT_MS": "20000", "PATH": "/usr/bin:/bin"}
    outcomes = []
    for side in ("c", "reference"):
        seen: list = []
        thread = threading.Thread(target=lambda: seen.append(peer()), daemon=True)
        thread.start()
        if side == "c":
            done = subprocess.run([str(host)], capture_output=True, timeout=60, env=environ, cwd=tmp_path)
            status, stderr = done.returncode, done.stderr
        else:
            out = io.BytesIO()
            status = run_program(code, [], name=str(host), stderr=out, environ=environ)
            stderr = out.getvalue()
        thread.join(30)
        outcomes.append((status, stderr, seen[0]))
    return outcomes


def connected_to(port: int, within_s: float = 20.0) -> socket.socket:
    deadline = time.monotonic() + within_s
    while True:
        try:
            return socket.create_connection(("127.0.0.1", port), timeout=5)
        except ConnectionRefusedError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.02)


def test_a_listening_programs_fail_names_the_address_its_peer_came_from(tmp_path):
    port = free_port()
    code = program(connect(port, 1, 0) + bytes([RECEIVE]) + nat(0) + nat(0) + nat(8)
                   + fail(5, b"malformed first message"), slots=1)

    def stranger():
        with connected_to(port) as sock:
            sock.sendall(b"\xff" * 8)
            came_from = sock.getsockname()
            sock.recv(1)                # until the host closes
        return f"{came_from[0]}:{came_from[1]}"

    for status, stderr, came_from in both(tmp_path, code, stranger):
        assert status == 5
        assert stderr == (f"native: command 2 (Fail; peer {came_from}): malformed first message; nothing was "
                          f"published\n").encode()


def test_a_connecting_programs_fail_names_the_addresses_it_connected_to(tmp_path):
    port = free_port()
    code = program(connect(port, 0, 0) + connect(port, 0, 1) + fail(7, b"refused"), slots=2)
    listener = socket.create_server(("127.0.0.1", port))

    def accept_two():
        taken = [listener.accept()[0] for _ in range(2)]
        for sock in taken:
            sock.recv(1)
            sock.close()
        return f"127.0.0.1:{port}"

    try:
        for status, stderr, address in both(tmp_path, code, accept_two):
            assert (status, stderr) == (7, f"native: command 2 (Fail; peers {address}, {address}): refused; "
                                           f"nothing was published\n".encode())
    finally:
        listener.close()
