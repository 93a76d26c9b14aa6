"""README, "Exit codes": what a signal does before bobc's first line, in the interpreter's own start
(probe s34 docs34 finding 1).  The README said "its own traceback and exit 1"; CPython (3.8+) ends
an unhandled KeyboardInterrupt by the signal itself, so the shell sees 130, and a SIGTERM or SIGHUP
there kills the process silently.  Here the signal is sent as the console script asks for bobc's
package, before any line of it runs, and the README's sentence is held to what happens."""
from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]

BEFORE_BOBC = """
import os, sys, _signal
sys.argv[0] = "bobc"
# as a shell's foreground command starts: Python's own SIGINT handler, the other two at their
# default (a job started in the background, as CI may run the tests, inherits SIGINT ignored)
_signal.signal(_signal.SIGINT, _signal.default_int_handler)
_signal.signal(_signal.SIGTERM, _signal.SIG_DFL)
_signal.signal(_signal.SIGHUP, _signal.SIG_DFL)

class Signal:
    def find_spec(self, name, path=None, target=None):
        if name == "bobc":
            os.kill(os.getpid(), _signal.{name})
        return None

sys.meta_path.insert(0, Signal())
from bobc.cli import main
sys.exit(main())
"""


def _window() -> str:
    text = " ".join((REPO / "README.md").read_text().split())
    start = text.index("the Python interpreter's own start")
    return text[start:text.index("Between a publication's", start)]


@pytest.mark.parametrize("name", ["SIGINT", "SIGTERM", "SIGHUP"])
def test_the_readme_says_what_a_signal_does_before_bobc_starts(tmp_path, name):
    env = {**os.environ, "PYTHONPATH": str(REPO / "compiler")}
    done = subprocess.run([sys.executable, "-c", BEFORE_BOBC.replace("{name}", name), "check", "x.bob"],
                          cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)
    number = getattr(signal, name)
    assert done.returncode == -number, (done.returncode, done.stderr)     # ended by the signal
    assert "bobc:" not in done.stderr                                     # bobc's handler was not there yet
    window = _window()
    assert f"{128 + number}" in window, window                            # the shell's status for it
    if name == "SIGINT":
        assert "KeyboardInterrupt" in done.stderr and "KeyboardInterrupt traceback" in window
    else:
        assert done.stderr == "" and "no line" in window
