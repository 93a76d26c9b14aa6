"""A signal while a deep evaluation runs on its own thread ends the command with its line (probe
s44 signals2 finding 1).

A value nested deeper than the main thread's stack takes is evaluated on the
`bobc-deep-evaluation` thread (language/program.py).  A signal while the main thread waited for
it unwound the main thread, whose _evaluation_ends put the caller's recursion limit back under a
thread still tens of thousands of frames deep: CPython aborted ("Fatal Python error:
_Py_CheckRecursiveCall: Cannot recover from stack overflow", SIGABRT, a page of frames, no line).
Expected: cli.main's 143 and `bobc: terminated` alone on stderr, from README's "Exit codes"."""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap

from tests.conftest import REPO
from tests.language.test_recursion_limit_threads_s41 import PLAN

# in a child interpreter: `bobc eval` of a value nested deeper than the main thread's stack takes,
# SIGTERM to itself once the deep-evaluation thread has run a while
DEEP = textwrap.dedent("""
    import os, signal, sys, threading, time
    from bobc import cli

    def terminate():
        while not any(thread.name == "bobc-deep-evaluation" for thread in threading.enumerate()):
            time.sleep(0.01)
        time.sleep(0.3)
        os.kill(os.getpid(), signal.SIGTERM)

    threading.Thread(target=terminate, daemon=True).start()
    code = cli.main(["eval", sys.argv[1], "deep"])
    print("code", code, flush=True)
""")


def test_a_signal_during_a_deep_evaluation_ends_the_command_with_its_line(tmp_path):
    plan = tmp_path / "Plan.bob"
    deep = "(sum (upTo 60000))"
    for _ in range(11):         # long enough for the signal to find the thread at work
        deep = f"(nat-add (sum (upTo 60000)) {deep})"
    text = PLAN.format(n=60000).replace(
        "def code : Bytes = (compiler-native-encode (family Plan) (constructor Plan PlanValue 7))",
        "def code : Nat = 3").replace("(bytes-length code)", "code")
    plan.write_text(text.replace("def deep : Nat = (sum (upTo 60000))", f"def deep : Nat = {deep}"))
    done = subprocess.run([sys.executable, "-c", DEEP, str(plan)], cwd=tmp_path, env={**os.environ, "PYTHONPATH": str(REPO / "compiler")},
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.splitlines() == [f"code {128 + int(signal.SIGTERM)}"], done.stdout
    assert done.stderr.splitlines() == ["bobc: terminated"], done.stderr[-2000:]
