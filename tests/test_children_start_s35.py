"""An ending signal that arrives while bobc starts a process (probe s35 interrupt finding 4).

Python handles a signal between bytecodes: one that came after the child was made but before
subprocess.Popen returned raised its KeyboardInterrupt inside Popen, so subprocess.run, which
kills its process on an interruption, never held it -- the process ran on after bobc ended (the
signal handler's SIGTERM sweep misses one that ignores SIGTERM).  Here the signal is sent from
inside Popen right after the child is made, so its handler runs in that window every time."""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from bobc import children

STUBBORN = """import os, signal, sys, time
signal.signal(signal.SIGTERM, signal.SIG_IGN)
signal.signal(signal.SIGINT, signal.SIG_IGN)
open(sys.argv[1], "w").write(str(os.getpid()))
time.sleep(60)
"""


def gone(pid: int) -> bool:
    try:
        return b") Z" in Path(f"/proc/{pid}/stat").read_bytes()
    except OSError:
        return True


@pytest.fixture
def signal_while_starting(monkeypatch):
    """SIGINT to the main thread from inside Popen, once the child exists; the handler raises
    KeyboardInterrupt (as cli's does Ended)."""
    real = subprocess.Popen._execute_child

    made_pids: list[int] = []

    def made(self, *args, **kwargs):
        real(self, *args, **kwargs)
        made_pids.append(self.pid)
        signal.pthread_kill(threading.main_thread().ident, signal.SIGINT)

    def interrupt(number, frame):
        raise KeyboardInterrupt

    monkeypatch.setattr(subprocess.Popen, "_execute_child", made)
    previous = signal.signal(signal.SIGINT, interrupt)
    yield made_pids
    signal.signal(signal.SIGINT, previous)


@pytest.mark.parametrize("how", ["run", "Running.run"])
def test_a_signal_while_a_process_starts_stops_it(tmp_path, signal_while_starting, how):
    command = [sys.executable, "-c", STUBBORN, str(tmp_path / "pid")]
    start = children.run if how == "run" else children.Running().run
    try:
        with pytest.raises(KeyboardInterrupt):
            start(command, text=True)
        assert len(signal_while_starting) == 1
        assert gone(signal_while_starting[0]), "the process bobc was starting runs on"
    finally:
        for pid in signal_while_starting:
            if not gone(pid):
                os.kill(pid, signal.SIGKILL)


def test_without_a_signal_it_is_subprocess_run(tmp_path):
    done = children.run([sys.executable, "-c", "import sys; print('out'); sys.stderr.write('err'); sys.exit(3)"],
                        text=True)
    assert (done.returncode, done.stdout, done.stderr) == (3, "out\n", "err")
