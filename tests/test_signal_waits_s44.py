"""A signal that arrives while bobc's main thread waits for its worker threads ends the command
cleanly, also a second one a few milliseconds later (probe s44 signals2 finding 2).

A signal handler's exception (cli's Ended) lands at whatever bytecode runs.  Inside threading's
own bookkeeping it corrupts it: Condition.wait, interrupted between its wait and putting its lock
back (`_acquire_restore`), leaves its `with` to release a lock it does not hold ("RuntimeError:
release unlocked lock", CPython's threading.py); a first signal lands in the acquire, cleanly, a
second one a few milliseconds later in that cleanup.  The tests make the second signal arrive
exactly there: Condition._acquire_restore, in the main thread once the first signal was raised,
raises a signal first.  The expected outcomes are the first signal's exception, every stubborn
process gone, and no other exception: what README's "Exit codes" promises of a signal.  Without
the fix the pool's stop hung on the future whose condition lock the main thread kept (60 s
timeout here) or said "RuntimeError: release unlocked lock"."""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

from tests.conftest import REPO

# in a child interpreter: two jobs each run a process that ignores SIGTERM and never ends; SIGINT
# once both run, and a SIGHUP inside every later Condition.wait's lock restore of the main thread
POOL = textwrap.dedent("""
    import os, signal, sys, threading, time
    from pathlib import Path
    from bobc import children

    pids = Path(sys.argv[1])
    STUBBORN = ("import os, signal, sys, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); "
                "open(sys.argv[1], 'a').write(f'{os.getpid()}\\\\n'); time.sleep(600)")

    class Interrupted(KeyboardInterrupt):
        pass

    armed = []

    def interrupt(number, frame):
        armed.append(number)
        raise Interrupted(number)

    for number in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(number, interrupt)

    restore = threading.Condition._acquire_restore

    def second_signal_there(self, state):
        if armed and threading.current_thread() is threading.main_thread():
            signal.raise_signal(signal.SIGHUP)
        return restore(self, state)

    threading.Condition._acquire_restore = second_signal_there

    def first_signal():
        while len(pids.read_text().split()) < 2:
            time.sleep(0.01)
        os.kill(os.getpid(), signal.SIGINT)

    threading.Thread(target=first_signal, daemon=True).start()
    running = children.Running()
    started = time.monotonic()
    try:
        children.in_threads(lambda item: running.run([sys.executable, "-c", STUBBORN, str(pids)]),
                            [0, 1], 2, "test-pool", running)
    except Interrupted as interruption:
        threading.Condition._acquire_restore = restore
        print("raised", interruption.args[0], flush=True)
    print("took", round(time.monotonic() - started), flush=True)
""")


def alive(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_bytes().rpartition(b")")[2].split()[0] != b"Z"
    except OSError:
        return False


def environment() -> dict:
    return {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO / "compiler"),
                                                         *filter(None, [os.environ.get("PYTHONPATH")])])}


def test_a_second_signal_in_a_pools_wait_still_stops_its_jobs_and_raises_the_first(tmp_path):
    pids = tmp_path / "pids"
    pids.write_text("")
    try:
        done = subprocess.run([sys.executable, "-c", POOL, str(pids)], cwd=tmp_path, env=environment(),
                              capture_output=True, text=True, timeout=60)
    finally:
        for pid in map(int, pids.read_text().split()):
            if alive(pid):
                os.kill(pid, signal.SIGKILL)
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0] == f"raised {int(signal.SIGINT)}", done.stdout
    # the second signal cuts the grace (children.STOP_GRACE_S) short: SIGKILL at once
    assert int(lines[1].split()[1]) < 5, done.stdout
    started = [int(pid) for pid in pids.read_text().split()]
    assert len(started) == 2
    assert not [pid for pid in started if alive(pid)], "a job's process still runs"
