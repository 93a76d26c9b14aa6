"""`bobc build -o` into a locked folder says so, then waits (probe s29 lockwait; docs/runtime.md,
"Files": concurrent invocations).  Before, a build whose output folder another process held
locked (a host stopped with Ctrl-Z in the middle of its publication) blocked without a word.  Now
one line on stderr names the folder, in the C hosts' words (tests/native/test_publication_lock_wait.py
holds the hosts and the reference runner to the same line); the build writes its host once the
lock is released, and Ctrl-C while it waits says `bobc: interrupted` (exit 130), its temporary
removed."""
from __future__ import annotations

import fcntl
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
PLAN = REPO / "examples/linear_regression/LinReg/Build/NativeHost.bob"
TIMEOUT_S = 120
NOTICE = ("bobc: folder out is locked: another process is publishing into it; waiting for it to finish "
          "(if nothing else should be running, find it with fuser -v or lsof on the folder)\n")

COMPILING = ("bobc: compiling the C runtime (once: later builds with this runtime and C compiler "
             "reuse it from the cache)\n")


def interruptible() -> None:
    """The run's SIGINT back to its default: a test suite started in the background of a
    non-interactive shell (CI's) has it ignored, which every child inherits, and a host keeps an
    ignored SIGINT ignored (as a shell's `cmd &` asks)."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)

def environment(tmp_path: Path) -> dict:
    env = {**os.environ, "BOBC_CACHE_DIR": str(tmp_path / "cache")}
    env["PYTHONPATH"] = os.pathsep.join([str(REPO / "compiler"), *filter(None, [env.get("PYTHONPATH")])])
    return env


@pytest.mark.parametrize("then", ["release", "interrupt"])
def test_a_build_says_it_waits_for_a_locked_output_folder(tmp_path, then):
    build = [sys.executable, "-m", "bobc", "build", str(PLAN), "-o"]
    alone = subprocess.run([*build, "alone"], cwd=tmp_path, env=environment(tmp_path), capture_output=True,
                           text=True, timeout=TIMEOUT_S)
    # the first build into this test's empty cache compiles the C runtime and says so (probe s29 speed,
    # finding 7); the build into the locked folder below reuses it, so its stderr is the lock notice alone
    assert alone.returncode == 0 and alone.stderr == COMPILING, alone.stderr
    out = tmp_path / "out"
    out.mkdir()
    held = os.open(out, os.O_RDONLY | os.O_DIRECTORY)
    fcntl.flock(held, fcntl.LOCK_EX)
    err_path = tmp_path / "stderr"
    try:
        with open(err_path, "wb") as err:
            run = subprocess.Popen([*build, "out/host"], cwd=tmp_path, env=environment(tmp_path),
                                   stdout=subprocess.PIPE, stderr=err, preexec_fn=interruptible)
        try:
            deadline = time.monotonic() + TIMEOUT_S
            while NOTICE.encode() not in err_path.read_bytes():
                assert run.poll() is None, f"the build ended first: {err_path.read_bytes()!r}"
                assert time.monotonic() < deadline, "no notice"
                time.sleep(0.01)
            assert err_path.read_text() == NOTICE
            assert run.poll() is None and not (out / "host").exists()
            if then == "interrupt":
                run.send_signal(signal.SIGINT)
                assert run.wait(timeout=TIMEOUT_S) == 130         # the lock still held: it never needed it
                assert err_path.read_text() == NOTICE + "bobc: interrupted\n"
                assert os.listdir(out) == [], "the interrupted build left its temporary"
                return
            os.close(held)
            held = None
            assert run.wait(timeout=TIMEOUT_S) == 0, err_path.read_text()
            assert err_path.read_text() == NOTICE
            assert os.listdir(out) == ["host"]
            assert (out / "host").read_bytes() == (tmp_path / "alone").read_bytes()
        finally:
            if run.poll() is None:
                run.kill()
                run.wait()
            run.stdout.close()
    finally:
        if held is not None:
            os.close(held)
