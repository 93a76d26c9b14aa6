"""The seed-003 tests that listen over TCP use a port of the run's own (conftest.py `port`), so
two runs on one machine at once, or a program of the user's holding a port, fail none of them
(probe s36 parallelsuites finding 1: they built 47391 and 47393 into their hosts; a second run's
stand-in worker 0 got EADDRINUSE in every test, a listener at 47393 failed test_c_hosts)."""
from __future__ import annotations

import contextlib
import os
import socket
import subprocess
import sys
from pathlib import Path

REPOSITORY = Path(__file__).resolve().parents[2]
TAKEN = (47391, 47393, 47019)           # the ports these tests fixed before


def test_the_runs_port_is_held_for_the_run(port):
    """Nothing else binds it plainly (nor gets it from bind(0) or as a connection's local port);
    a listener with SO_REUSEADDR, as the hosts and the stand-in peers make, binds it and accepts."""
    with socket.socket() as other:
        try:
            other.bind(("127.0.0.1", port))
            taken = False
        except OSError:
            taken = True
    assert taken
    with socket.socket() as listener:
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        listener.bind(("127.0.0.1", port))
        listener.listen(1)
        with socket.create_connection(("127.0.0.1", port), timeout=5) as peer:
            accepted, _ = listener.accept()
            with accepted:
                peer.sendall(b"ok")
                assert accepted.recv(2) == b"ok"


def test_listeners_at_the_ports_once_fixed_fail_no_test():
    """Another program listening at 47391, 47393 and 47019 (here: this test) while the tests that
    used them run (in a pytest of their own, with this run's folder and cache)."""
    with contextlib.ExitStack() as stack:
        for number in TAKEN:
            listener = stack.enter_context(socket.socket())
            listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            with contextlib.suppress(OSError):   # already someone's: taken all the same
                listener.bind(("127.0.0.1", number))
                listener.listen(1)
        done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                               "tests/partitioned_regression/test_host_settings.py::"
                               "test_known_settings_pass_open_device",
                               "tests/partitioned_regression/test_c_hosts.py::"
                               "test_peers_built_for_different_step_counts_refuse_before_opening_the_gpu",
                               "tests/partitioned_regression/test_two_phase_publication.py::"
                               "test_a_resumed_pair_publishes_every_file_at_the_next_epoch"],
                              cwd=REPOSITORY, capture_output=True, text=True, timeout=900,
                              env={**os.environ, "PYTHONPATH": str(REPOSITORY / "compiler")})
    assert done.returncode == 0 and "3 passed" in done.stdout, done.stdout[-3000:] + done.stderr[-2000:]
