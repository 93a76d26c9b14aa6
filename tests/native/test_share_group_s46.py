"""Two native peers on one machine share a GPU context whatever addresses they were built with
(probe s46 sharegroup, findings 1 and 3; probe s46 partreg2, finding 7).

runtime_c/native_device.c decided "a peer on this machine" from the endpoint's *built* address
("127." only) and named the group file /dev/shm/bobc-native-group-<UUID>-<that address>: a worker 0
built with 0.0.0.0 (the docs' way to listen on every interface) never published its group, and a
worker 1 built with 127.0.0.1 waited 2 s for a file named with "127.0.0.1:P" and took a context
of its own (~970 us a step instead of ~55, docs/partitioned-regression.md).  Now np_peer_open
notes the connection itself: the address:port it reached (the listening end's own) and whether
its two ends are on this machine.  runtime_c/tests/peer_share_note.c runs both ends of a pair
in one process and prints each end's note; the oracle is what Linux gives the two ends of such
a connection (a listener at 0.0.0.0 reached over loopback sees 127.0.0.1; a connect to 0.0.0.0
reaches 127.0.0.1; a connect to this machine's own address has that address at both ends),
derived here with Python's own sockets, not read from the C."""
from __future__ import annotations

import shutil
import socket
import subprocess
from pathlib import Path

import pytest

RUNTIME = Path(__file__).resolve().parents[2] / "runtime_c"


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def own_address() -> str | None:
    """This machine's address toward the outside (a UDP connect sends nothing), or None."""
    try:
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
            probe.connect(("192.0.2.1", 9))
            address = probe.getsockname()[0]
    except OSError:
        return None
    return None if address.startswith("127.") or address == "0.0.0.0" else address


def reached_by_python(listen_at: str, connect_to: str) -> str:
    """The listening end's own address of a connection made as the pair makes it (the oracle)."""
    with socket.socket() as listener:
        listener.bind((listen_at, 0))
        listener.listen(1)
        with socket.create_connection((connect_to, listener.getsockname()[1])) as connecting:
            accepted, _ = listener.accept()
            with accepted:
                assert accepted.getsockname()[0] == connecting.getpeername()[0]
                return accepted.getsockname()[0]


@pytest.fixture(scope="module")
def harness(tmp_path_factory):
    gcc = shutil.which("gcc") or shutil.which("cc")
    if not gcc:
        pytest.skip("no C compiler")
    built = tmp_path_factory.mktemp("share") / "peer_share_note"
    done = subprocess.run([gcc, "-O1", "-std=c11", "-Wall", "-Wextra", "-Werror", f"-I{RUNTIME}", "-D_DEFAULT_SOURCE",
                           str(RUNTIME / "tests/peer_share_note.c"), str(RUNTIME / "native_peer.c"), "-o", str(built),
                           "-lpthread"], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return built


def notes(harness, listen_at: str, connect_to: str, port: int, stray: str | None = None) -> dict[str, dict[str, str]]:
    """Each end's last note (a listener notes again for each connection it takes)."""
    ran = subprocess.run([str(harness), listen_at, connect_to, str(port)] + ([stray] if stray else []),
                         capture_output=True, text=True, timeout=60)
    assert ran.returncode == 0, ran.stdout + ran.stderr
    said = {}
    for line in ran.stdout.splitlines():
        side, rest = line.split(" ", 1)
        fields = dict(part.split("=", 1) for part in rest.split(" ", 2)[:2])
        said[side] = fields
    assert set(said) == {"listening", "connecting"}, ran.stdout
    return said


@pytest.mark.parametrize("listen_at, connect_to", [
    ("0.0.0.0", "127.0.0.1"),      # worker 0 on every interface, worker 1 over loopback: the probe's case
    ("127.0.0.1", "0.0.0.0"),      # worker 1 built with 0.0.0.0: Linux connects it to this machine
    ("127.0.0.1", "127.0.0.1"),    # the docs' step by step
    ("127.0.0.2", "127.0.0.2"),    # another loopback address: its two ends differ (127.0.0.1 -> 127.0.0.2)
    ("0.0.0.0", "own"),            # worker 1 at this machine's own address (the docs' 10.0.0.5, one node)
    ("own", "own"),
])
def test_peers_on_one_machine_agree_on_their_group_and_share_s46(harness, listen_at, connect_to):
    own = own_address()
    if "own" in (listen_at, connect_to) and own is None:
        pytest.skip("this machine has no address but loopback")
    listen_at, connect_to = (own if a == "own" else a for a in (listen_at, connect_to))
    port = free_port()
    said = notes(harness, listen_at, connect_to, port)
    expected = f"{reached_by_python(listen_at, connect_to)}:{port}"
    assert said["listening"]["reached"] == said["connecting"]["reached"] == expected, said
    assert said["listening"]["same_machine"] == said["connecting"]["same_machine"] == "1", said


def test_the_listeners_note_follows_the_connection_it_takes_as_its_peer_s46(harness):
    """A stray connection (to 127.0.0.2) accepted first and closed before its first byte is
    replaced by the peer's (to 127.0.0.1) when the listener receives (accept_again): the note the
    device session reads is the peer's connection, not the stray's (probe s46 sharegroup,
    finding 3: it kept the first connection's)."""
    port = free_port()
    said = notes(harness, "0.0.0.0", "127.0.0.1", port, stray="127.0.0.2")
    assert said["listening"]["reached"] == said["connecting"]["reached"] == f"127.0.0.1:{port}", said
