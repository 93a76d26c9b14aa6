"""An interrupted build never waits on a compiler that does not end on SIGTERM (probe s35
interrupt finding 1).

compile_objects sent its running compilers SIGTERM and its pool waited for them: one that ignores
SIGTERM (or never ends) held `bobc build` after Ctrl-C, SIGTERM or SIGHUP until it ended by itself,
and a second signal escaped the wait with the compiler still running.  Now the stop is SIGTERM,
STOP_GRACE_S, then SIGKILL; a further signal cuts the grace short.  The fake compiler notes its pid,
then that SIGTERM reached it (ignored), and writes a marker if it ever ends by itself."""
from __future__ import annotations

import os
import signal
import sys
import threading
import time
from pathlib import Path

import pytest

from bobc import children
from bobc.host import gcc

FAKE_GCC = """#!{python}
import os, signal, sys, time
folder = {folder!r}
name = os.path.basename(sys.argv[sys.argv.index("-c") + 1])
signal.signal(signal.SIGINT, signal.SIG_IGN)
signal.signal(signal.SIGTERM, lambda n, f: open(os.path.join(folder, name + ".term"), "w").close())
open(os.path.join(folder, name + ".pid"), "w").write(str(os.getpid()))
end = time.monotonic() + 60
while time.monotonic() < end:
    time.sleep(0.05)
open(os.path.join(folder, name + ".finished"), "w").close()
"""


def wait_for(path: Path) -> None:
    deadline = time.monotonic() + 120
    while not path.exists():
        assert time.monotonic() < deadline, f"{path.name} never appeared"
        time.sleep(0.01)


def gone(pid: int) -> bool:
    try:
        return b") Z" in Path(f"/proc/{pid}/stat").read_bytes()
    except OSError:
        return True


def interrupted_compile(tmp_path, monkeypatch, after_first=None):
    """compile_objects of a.c and b.c (both at once) with the fake, interrupted once both run:
    (the KeyboardInterrupt raised, the compilers' pids).  `after_first`: run by a thread once the
    first interruption's SIGTERM reached both compilers."""
    fake = tmp_path / "gcc"
    fake.write_text(FAKE_GCC.format(python=sys.executable, folder=str(tmp_path)))
    fake.chmod(0o755)
    jobs = [(tmp_path / f"{name}.c", tmp_path / f"{name}.o", name) for name in "ab"]
    for source, _, _ in jobs:
        source.write_text("int x;\n")
    monkeypatch.setattr(os, "cpu_count", lambda: 2)
    count = []

    def interrupt(number, frame):
        count.append(number)
        raise KeyboardInterrupt(len(count))

    def send():
        for name in "ab":
            wait_for(tmp_path / f"{name}.c.pid")
        signal.pthread_kill(threading.main_thread().ident, signal.SIGINT)
        if after_first is not None:
            for name in "ab":
                wait_for(tmp_path / f"{name}.c.term")
            after_first()

    previous = signal.signal(signal.SIGINT, interrupt)
    sender = threading.Thread(target=send)
    try:
        sender.start()
        with pytest.raises(KeyboardInterrupt) as raised:
            gcc.compile_objects(str(fake), jobs, [])
    finally:
        sender.join()
        signal.signal(signal.SIGINT, previous)
    pids = [int((tmp_path / f"{name}.c.pid").read_text()) for name in "ab"]
    return raised.value, pids, count


def test_compilers_that_ignore_sigterm_are_killed(tmp_path, monkeypatch):
    monkeypatch.setattr(children, "STOP_GRACE_S", 0.5)
    raised, pids, _ = interrupted_compile(tmp_path, monkeypatch)
    assert raised.args == (1,)
    assert all(gone(pid) for pid in pids), "a compiler still runs"
    assert not list(tmp_path.glob("*.finished")), "the compile was waited for to its end"


def test_a_second_signal_ends_the_grace(tmp_path, monkeypatch):
    """The grace far longer than the compilers live: only the second signal can end the wait
    before they end by themselves.  The first interruption is the one raised."""
    monkeypatch.setattr(children, "STOP_GRACE_S", 600)
    second = lambda: signal.pthread_kill(threading.main_thread().ident, signal.SIGINT)     # noqa: E731
    raised, pids, count = interrupted_compile(tmp_path, monkeypatch, after_first=second)
    assert raised.args == (1,) and len(count) == 2
    assert all(gone(pid) for pid in pids), "a compiler still runs"
    assert not list(tmp_path.glob("*.finished")), "the compile was waited for to its end"


def test_the_readme_says_the_grace_the_code_gives():
    readme = " ".join((Path(__file__).resolve().parents[2] / "README.md").read_text(encoding="utf-8").split())
    assert f"then SIGKILL for one still running {children.STOP_GRACE_S:g} s later or at a further signal" in readme
