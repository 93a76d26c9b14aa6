"""The C host's prepared temporaries: a second SIGINT, SIGTERM or SIGHUP during the first one's removal of
them ends the process by the first (docs/runtime.md, "Files": the three remove them "and end the process by
that signal"; probe s46 leftovers8 finding 2: SIGTERM, then SIGINT during its cleanup, ended it by SIGINT).

runtime_c/tests/test_signal_order_s46.c is built with the removal's unlinkat wrapped to raise the second
signal inside the first one's handler, each of the nine pairs; the oracle is the wait status the parent
reads (WTERMSIG), against the signal the child raised first, and the folder left without a temporary."""
from __future__ import annotations

import subprocess

from tests.conftest import make_runtime


def test_a_second_signal_during_the_cleanup_keeps_the_first_ones_ending_s46(runtime_build, tmp_path):
    target = runtime_build / "test_signal_order_s46"
    run = make_runtime(runtime_build, str(target))
    assert run.returncode == 0, run.stdout + run.stderr
    run = subprocess.run([str(target)], capture_output=True, text=True, timeout=120,
                         env={"TMPDIR": str(tmp_path), "PATH": "/usr/bin:/bin"})
    assert run.returncode == 0 and "signal order: 9 checks, 0 failures" in run.stdout, run.stdout + run.stderr
    assert list(tmp_path.iterdir()) == []
