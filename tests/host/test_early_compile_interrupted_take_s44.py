"""A signal that interrupts the build while it waits for the early runtime compile still stops
every gcc of that compile, also one that ignores SIGTERM (session 44: the CI timeout of
tests/test_signal_children_s35.py::test_sigterm_ends_a_build_whose_compilers_ignore_it).

The build waits for the early compile in gcc._Early.take.  It waited with Thread.join, and
CPython 3.11's join, interrupted by a signal handler's exception, marks the thread as ended for
good (threading's bpo-45274 handling releases the running thread's own lock).  The cancel that
followed then saw no compile running, skipped the SIGKILL, and the gcc processes that ignore
SIGTERM held the interpreter's exit (concurrent.futures joins its workers) until they ended by
themselves.  Here the interruption is a SIGALRM whose handler raises KeyboardInterrupt, as bobc's
handlers raise cli.Ended, sent while library_objects waits."""
from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

# a runtime source's compile notes its pid, ignores SIGTERM and SIGINT, and never ends (the s35 stub)
from tests.test_signal_children_s35 import STUBBORN_GCC

REPO = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.skipif(shutil.which("gcc") is None, reason="needs gcc")


# in a process of its own: the early compile started as `bobc build -o` starts it, a SIGALRM
# while library_objects waits for it, then the `with` left as the interrupted build leaves it
SCRIPT = textwrap.dedent("""
    import os, signal, sys, time
    from pathlib import Path
    from bobc.commands.build import runtime_compiled_early
    from bobc.host import gcc
    from bobc.native.interpreter import sources
    from bobc.resources import shared_folder

    def interrupt(number, frame):
        raise KeyboardInterrupt

    pids = Path(os.environ["FAKE_PIDS"])
    runtime = shared_folder("runtime_c")
    with runtime_compiled_early(Path("host"), None) as early:
        assert early is not None, "no early compile started"
        while not pids.read_text().split():
            time.sleep(0.01)
        signal.signal(signal.SIGALRM, interrupt)
        signal.setitimer(signal.ITIMER_REAL, 0.3)
        try:
            gcc.library_objects(gcc.compiler(), sources(runtime, "LIB_SRC"), [runtime])
        except KeyboardInterrupt:
            print("interrupted while waiting", flush=True)
        else:
            sys.exit("library_objects returned from a compile that never ends")
    print("left", flush=True)
""")


def alive(pid: int) -> bool:
    """Running, or ended and not reaped (a zombie): either is a gcc the build did not finish with."""
    return Path(f"/proc/{pid}").exists()


def test_an_interrupted_wait_for_the_early_compile_still_kills_compilers_that_ignore_sigterm(tmp_path):
    fake = tmp_path / "bin"
    fake.mkdir()
    (fake / "gcc").write_text(STUBBORN_GCC)
    (fake / "gcc").chmod(0o755)
    log = tmp_path / "pids"
    log.write_text("")
    (tmp_path / "tmp").mkdir()
    env = {**os.environ, "PATH": f"{fake}{os.pathsep}{os.environ['PATH']}", "REAL_GCC": shutil.which("gcc"),
           "PYTHON": sys.executable, "FAKE_PIDS": str(log), "BOBC_CACHE_DIR": str(tmp_path / "cache"),
           "TMPDIR": str(tmp_path / "tmp"),
           "PYTHONPATH": os.pathsep.join([str(REPO / "compiler"), *filter(None, [os.environ.get("PYTHONPATH")])])}
    started = time.monotonic()
    try:
        # the cancel's grace (children.STOP_GRACE_S, 5 s) then SIGKILL; without the fix the
        # process waits on its stubborn compilers for their 600 s
        done = subprocess.run([sys.executable, "-c", SCRIPT], cwd=tmp_path, env=env, capture_output=True,
                              text=True, timeout=60)
    finally:
        for pid in map(int, log.read_text().split()):
            if alive(pid):
                os.kill(pid, signal.SIGKILL)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split("\n")[:2] == ["interrupted while waiting", "left"], done.stdout
    assert time.monotonic() - started < 60
    compilers = [int(pid) for pid in log.read_text().split()]
    assert compilers, "no stubborn compile ran"
    assert not [pid for pid in compilers if alive(pid)], "compilers still running after the build left"
    assert os.listdir(tmp_path / "tmp") == [], "the early compile's scratch folder was left"
