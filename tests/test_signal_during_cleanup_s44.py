"""A second signal while the first one's cleanup runs does not change how the command ended: its
line and exit code are the first signal's (probe s44 signals2 finding 4; README, "Exit codes").

Each signal's handler raises cli.Ended, also one arriving while the cleanup of an earlier one
runs (it still interrupts what runs there).  That later Ended replaced the first: a SIGHUP
moments after a SIGTERM ended a build `bobc: hung up`, 129.  Here, in a child interpreter, the
command itself raises SIGTERM and the command's temporaries folder's removal (cache.release_scratch,
run by cli's process_temporaries as the command unwinds) raises SIGHUP once it is done.
Expected, from README: SIGTERM's `bobc: terminated` alone and 143."""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap

from tests.conftest import REPO

SCRIPT = textwrap.dedent("""
    import signal, sys
    from bobc import cache, cli
    import bobc.commands.eval as command

    def terminated(args):
        signal.raise_signal(signal.SIGTERM)

    release = cache.release_scratch

    def hung_up_after(*args, **options):
        release(*args, **options)
        signal.raise_signal(signal.SIGHUP)

    command.run = terminated
    cache.release_scratch = hung_up_after
    print("code", cli.main(["eval", sys.argv[1], "x"]), flush=True)
""")


def test_a_signal_during_the_first_ones_cleanup_keeps_the_first_ones_line_and_code(tmp_path):
    plan = tmp_path / "Plan.bob"
    plan.write_text("module Plan\n\ndef x : Nat = 1\n")
    (tmp_path / "tmp").mkdir()
    env = {**os.environ, "PYTHONPATH": str(REPO / "compiler"), "TMPDIR": str(tmp_path / "tmp"),
           "BOBC_CACHE_DIR": str(tmp_path / "cache")}
    done = subprocess.run([sys.executable, "-c", SCRIPT, str(plan)], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == [f"code {128 + int(signal.SIGTERM)}"], done.stdout
    assert done.stderr.splitlines() == ["bobc: terminated"], done.stderr
    assert os.listdir(tmp_path / "tmp") == []
