"""A Ctrl-C while bobc starts, inside the imports its first lines make (probe s34 ux finding 1).

bobc's package installs its handlers for SIGINT, SIGTERM and SIGHUP as its first act (bobc.PROGRAM,
take_signals); they used to import `signal` (which loads `enum`) and `threading` before any handler
was in place, and a Ctrl-C in those imports -- the slowest part of that first act -- printed a
KeyboardInterrupt traceback.  Here the signal is sent from the first module import that bobc's
start asks for after its own: it must reach bobc's handler (one line, exit 130), whatever that
import is.  (The interpreter's own start, before any bobc line runs, is CPython's: see README,
"Exit codes".)
"""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]

STARTING = """
import _signal, os, sys
sys.argv[0] = "bobc"                    # the command, as its console script starts it
_signal.signal(_signal.SIG{name}, {handler})

class CtrlC:
    '''Sends the signal from the first import that goes past sys.modules once bobc's own began.'''
    armed = None

    def find_spec(self, name, path=None, target=None):
        if self.armed is None and name == "bobc":
            self.armed = True
        elif self.armed:
            self.armed = False
            print("sent during import of", name, file=sys.stdout)
            os.kill(os.getpid(), _signal.SIG{name})
        return None

sys.meta_path.insert(0, CtrlC())
import bobc
import bobc.cli
print("not stopped")
"""


@pytest.mark.parametrize("name, handler, code, line", [
    ("INT", "_signal.default_int_handler", 130, "bobc: interrupted\n"),
    ("TERM", "_signal.SIG_DFL", 143, "bobc: terminated\n"),
    ("HUP", "_signal.SIG_DFL", 129, "bobc: hung up\n"),
])
def test_a_signal_in_the_imports_of_bobcs_first_lines_is_one_line(name, handler, code, line):
    done = subprocess.run([sys.executable, "-c", STARTING.format(name=name, handler=handler)],
                          env={**os.environ, "PYTHONPATH": str(REPO / "compiler")}, capture_output=True,
                          text=True, timeout=120)
    assert "Traceback" not in done.stderr, done.stderr
    assert (done.returncode, done.stderr) == (code, line), done.stdout
    assert "not stopped" not in done.stdout


IN_ENUM = """
import _signal, os, sys
sys.argv[0] = "bobc"                    # the command, as its console script starts it
_signal.signal(_signal.SIG{name}, {handler})

class CtrlC:
    '''Sends the signal from the first import `enum` asks for while it is half loaded (the
    `import re` of bobc's cli, through argparse): the handler runs inside that import.'''
    sent = False

    def find_spec(self, name, path=None, target=None):
        enum = sys.modules.get("enum")
        if not self.sent and enum is not None and not hasattr(enum, "IntEnum"):
            self.sent = True
            print("sent during import of", name, "by enum", file=sys.stdout, flush=True)
            os.kill(os.getpid(), _signal.SIG{name})
        return None

sys.meta_path.insert(0, CtrlC())
import bobc
import bobc.cli
print("not stopped")
"""


@pytest.mark.parametrize("name, handler, code, line", [
    ("INT", "_signal.default_int_handler", 130, "bobc: interrupted\n"),
    ("TERM", "_signal.SIG_DFL", 143, "bobc: terminated\n"),
    ("HUP", "_signal.SIG_DFL", 129, "bobc: hung up\n"),
])
def test_a_signal_while_enum_is_half_imported_is_one_line(name, handler, code, line):
    """The early handler runs inside whatever import the signal came in: it must not import
    `signal` (whose first line imports `enum`, half loaded there: an ImportError traceback, exit 1;
    probe s34 today34 finding 1)."""
    done = subprocess.run([sys.executable, "-c", IN_ENUM.format(name=name, handler=handler)],
                          env={**os.environ, "PYTHONPATH": str(REPO / "compiler")}, capture_output=True,
                          text=True, timeout=120)
    if "by enum" not in done.stdout:
        pytest.skip("enum was loaded before bobc (this interpreter's start imports it)")
    assert "Traceback" not in done.stderr, done.stderr
    assert (done.returncode, done.stderr) == (code, line), done.stdout
    assert "not stopped" not in done.stdout
