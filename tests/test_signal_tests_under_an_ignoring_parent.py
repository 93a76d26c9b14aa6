"""The signal tests pass whatever the dispositions the test run was started with.

A shell without job control (a script, CI's runner, an agent's tool) starts a command put in the
background (`&`) with SIGINT and SIGQUIT ignored (POSIX, "Shell Execution Environment"), nohup
starts it with SIGHUP ignored, and an ignored signal stays ignored through fork and exec: every
process a test starts has them so, and bobc keeps an ignored signal ignored (bobc.take_signals).
A test that sends one of them to a bobc it started must give that bobc the disposition a
terminal's command has; session 34's CI failed on one that did not (SIGINT), and the suite's
SIGHUP cases failed the same way under nohup.  Here the tests that signal a starting bobc run in a
pytest whose parent ignored all three.
"""
from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
FILES = ["tests/test_cli_signals.py", "tests/test_cli_json_signals.py", "tests/test_ctrl_c_while_bobc_starts_s34.py",
         "tests/test_signal_before_bobc_starts_doc_s34.py"]


def ignoring() -> None:
    for number in (signal.SIGINT, signal.SIGQUIT, signal.SIGHUP):
        signal.signal(number, signal.SIG_IGN)


def test_the_tests_of_a_signal_while_bobc_starts_pass_in_a_run_started_in_the_background(tmp_path):
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO / "compiler"), *filter(None, [os.environ.get("PYTHONPATH")])])}
    done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--basetemp", str(tmp_path / "t"),
                           "-k", "while_bobc_starts or before_bobc_starts or in_the_imports or while_enum", *FILES],
                          cwd=REPO, env=env, preexec_fn=ignoring, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]
    assert " passed" in done.stdout and "deselected" in done.stdout, done.stdout[-2000:]
