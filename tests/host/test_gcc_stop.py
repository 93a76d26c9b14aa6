"""compile_objects stops every compiler when it is interrupted, also one a worker started after
the signal's sweep of bobc's children.

CI (session 35's start) saw `bobc build` hang after SIGHUP (tests/test_cli_signals.py): the
signal handler SIGTERMed the running gcc, a worker whose gcc had just ended took the next job
before the main thread cancelled the queue, and the pool's shutdown waited for that compile to
end.  Here the order is forced: the interruption's handler runs only once the late compiler has
started, so without the stop it is waited for to its natural end, which writes a marker."""
from __future__ import annotations

import os
import signal
import sys
import threading
import time
from pathlib import Path

import pytest

from bobc.host import gcc

FAKE_GCC = """#!{python}
import os, sys, time
folder = {folder!r}
source = os.path.basename(sys.argv[sys.argv.index("-c") + 1])
if source == "a.c":                         # the compile the Ctrl-C's process group signal ends
    open(os.path.join(folder, "a.pid"), "w").write(str(os.getpid()))
    time.sleep(600)
elif source == "b.c":                       # fails once the interruption began: its worker takes c.c
    while not os.path.exists(os.path.join(folder, "go")):
        time.sleep(0.01)
    sys.stderr.write("b.c:1:1: error: forced\\n")
    sys.exit(1)
else:                                       # the late compiler: its end writes the marker
    open(os.path.join(folder, "c.pid"), "w").write(str(os.getpid()))
    time.sleep(30)
    open(os.path.join(folder, "c.finished"), "w").write("finished")
"""


def wait_for(path: Path) -> None:
    """Until the fake has written its pid to `path` (the file exists, empty, before the write:
    read then, int('') failed the test now and then, session 44)."""
    deadline = time.monotonic() + 120
    while not (path.exists() and path.read_text().strip()):
        assert time.monotonic() < deadline, f"{path.name} never appeared"
        time.sleep(0.01)


def test_an_interrupted_compile_stops_a_compiler_started_after_the_signal(tmp_path, monkeypatch):
    fake = tmp_path / "gcc"
    fake.write_text(FAKE_GCC.format(python=sys.executable, folder=str(tmp_path)))
    fake.chmod(0o755)
    jobs = [(tmp_path / f"{name}.c", tmp_path / f"{name}.o", name) for name in "abc"]
    for source, _, _ in jobs:
        source.write_text("int x;\n")
    monkeypatch.setattr(os, "cpu_count", lambda: 2)         # a.c and b.c at once, c.c queued

    def interrupted(number, frame):
        os.kill(int((tmp_path / "a.pid").read_text()), signal.SIGTERM)     # the group's signal
        (tmp_path / "go").write_text("")
        wait_for(tmp_path / "c.pid")            # b.c failed and its worker started c.c
        raise KeyboardInterrupt

    def send_when_running():
        wait_for(tmp_path / "a.pid")
        signal.pthread_kill(threading.main_thread().ident, signal.SIGINT)

    previous = signal.signal(signal.SIGINT, interrupted)
    sender = threading.Thread(target=send_when_running)
    try:
        sender.start()
        with pytest.raises(KeyboardInterrupt):
            gcc.compile_objects(str(fake), jobs, [])
    finally:
        sender.join()
        signal.signal(signal.SIGINT, previous)
    assert (tmp_path / "c.pid").exists()
    assert not (tmp_path / "c.finished").exists(), "the late compiler was waited for to its end"
    late = int((tmp_path / "c.pid").read_text())
    assert not Path(f"/proc/{late}").exists() or b") Z" in Path(f"/proc/{late}/stat").read_bytes()
