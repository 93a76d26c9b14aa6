"""Probe s37 leftovers, finding 5: tests/gpu's seed-003 pair is built with the run's own port.

tests/gpu/test_partitioned_regression.py built its hosts with a fixed port (47311,
build_partitioned_regression_hosts.PORT), and tests/gpu/test_runtime.py built runtime_c into
runtime_c/build: a second suite on the same machine collided on both.  Now the pair is built with
tests/conftest.py's `port` (held for the run, as tests/partitioned_regression's are), which
hosts.txt records and the test reads back (a PR_HOSTS folder: its own), and runtime_c is built into
the run's runtime_build folder.  The GPU tests skip here; this test builds the pair on the CPU and
asks `bobc inspect` (the hosts' own commands) which port each peer listens at or connects to."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests" / "gpu"))

import build_partitioned_regression_hosts as B  # noqa: E402


def test_the_pair_is_built_with_the_port_it_is_given_and_records_it(tmp_path, port):
    hosts = B.build(bytes(range(16)), 0, tmp_path / "hosts", port)
    assert B.recorded_port(tmp_path / "hosts") == port
    for name in ("worker0", "worker1"):
        shown = subprocess.run([sys.executable, "-m", "bobc", "inspect", str(hosts[name])], capture_output=True,
                               text=True, env=B.bobc_environment(), timeout=300)
        assert shown.returncode == 0, shown.stderr
        peers = [line for line in shown.stdout.splitlines() if line.strip().startswith("peer")]
        assert peers and all(f"127.0.0.1:{port} " in line for line in peers), shown.stdout
