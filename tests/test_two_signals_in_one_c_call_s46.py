"""Two signals that arrive while bobc is inside one C call end the command by the first (README, "Exit
codes": "says one line, the first signal's"; probe s46 leftovers8 finding 2).

CPython's C-level handler only notes a signal; its Python handler runs later, between bytecodes, and
two noted during one C call (a long hash, a NumPy operation) run in the order of their numbers, not of
their arrival: SIGTERM, then SIGINT, ended the command `bobc: interrupted`, 130.  Here a command is
replaced by one C call (a shared object compiled with the system's cc) that raises the two signals one
after the other; the oracle is the order it raises them in: the first one's line and 128 + its number."""
from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import textwrap

import pytest

from tests.conftest import REPO

def default_signals() -> None:
    """In the child: the three signals as a terminal's command gets them (a suite started in the
    background has SIGINT ignored, under nohup SIGHUP, and bobc keeps an ignored signal ignored:
    tests/test_signal_tests_under_an_ignoring_parent.py)."""
    for number in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(number, signal.SIG_DFL)


SCRIPT = textwrap.dedent("""
    import ctypes, signal, sys
    from bobc import cli
    import bobc.commands.eval as command

    two = ctypes.CDLL(sys.argv[2]).two
    first, second = int(sys.argv[3]), int(sys.argv[4])

    def both(args):
        two(first, second)          # both raised inside this one C call

    command.run = both
    print("code", cli.main(["eval", sys.argv[1], "x"]), flush=True)
""")
WORDS = {signal.SIGINT: "interrupted", signal.SIGTERM: "terminated", signal.SIGHUP: "hung up"}


@pytest.fixture(scope="module")
def library(tmp_path_factory):
    compiler = shutil.which("cc") or shutil.which("gcc")
    if compiler is None:
        pytest.skip("no C compiler")
    folder = tmp_path_factory.mktemp("two")
    (folder / "two.c").write_text("#include <signal.h>\nvoid two(int a, int b) { raise(a); raise(b); }\n")
    subprocess.run([compiler, "-shared", "-fPIC", "-o", str(folder / "libtwo.so"), str(folder / "two.c")],
                   check=True, capture_output=True)
    return folder / "libtwo.so"


@pytest.mark.parametrize("first,second", [(signal.SIGTERM, signal.SIGINT), (signal.SIGINT, signal.SIGTERM),
                                          (signal.SIGTERM, signal.SIGHUP), (signal.SIGHUP, signal.SIGINT)],
                         ids=lambda s: signal.Signals(s).name)
def test_two_signals_in_one_c_call_end_the_command_by_the_first_s46(library, tmp_path, first, second):
    plan = tmp_path / "Plan.bob"
    plan.write_text("module Plan\n\ndef x : Nat = 1\n")
    (tmp_path / "tmp").mkdir()
    env = {**os.environ, "PYTHONPATH": str(REPO / "compiler"), "TMPDIR": str(tmp_path / "tmp"),
           "BOBC_CACHE_DIR": str(tmp_path / "cache")}
    done = subprocess.run([sys.executable, "-c", SCRIPT, str(plan), str(library), str(int(first)), str(int(second))],
                          cwd=tmp_path, env=env, capture_output=True, text=True, timeout=60,
                          preexec_fn=default_signals)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == [f"code {128 + int(first)}"], (done.stdout, done.stderr)
    assert done.stderr.splitlines() == [f"bobc: {WORDS[first]}"], done.stderr
    assert os.listdir(tmp_path / "tmp") == []
