"""Seed 003's tests: the model's Python package (examples/partitioned_regression) and the
independent native-program interpreter (tests/specs/native_program.py) on the path."""
from __future__ import annotations

import sys
from pathlib import Path

import pytest

REPOSITORY = Path(__file__).resolve().parents[2]
for folder in (REPOSITORY / "examples/partitioned_regression", REPOSITORY / "tests/specs",
               Path(__file__).resolve().parent):
    if str(folder) not in sys.path:
        sys.path.insert(0, str(folder))


@pytest.fixture(scope="session")
def port():
    """A TCP port of this run's own for the hosts these tests build (the port is built into both
    peers): chosen by the kernel and held for the whole run by a bound, non-listening socket with
    SO_REUSEADDR.  The hosts and the stand-in peers (peers.py, bobc's reference runner) set
    SO_REUSEADDR too, so they bind and listen beside it; another run's or program's bind(0), a
    plain bind of it, or an outgoing connection's local port never gets it meanwhile (Linux's
    bind conflict rules).  Two runs at once never meet; a fixed port made them fail each other."""
    import socket

    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as held:
        held.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        held.bind(("127.0.0.1", 0))
        yield held.getsockname()[1]
