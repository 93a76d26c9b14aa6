"""The "folder ... is locked" notice waits for a grace period (probe s30 cache finding 9).

Before, a run that found its folder locked printed the notice at once, so parallel jobs writing
one output folder showed it for waits of a few milliseconds (alarming in a CI log).  Now the lock
is tried again for a grace period (1 s; BOBC_IO_TEST_LOCK_GRACE_MS, tests only, sets another)
and the notice comes only once the wait has lasted that long, on both sides, the C request host
(NATIVE_DEVICE=memory) and `bobc run --reference`.

The test process holds the folder's lock from the start (the run waits in its recovery) and
releases it: once the run has the folder open and is waiting inside a long grace, the run ends
without a word; held past the (default) grace, the notice comes, once.
"""
from __future__ import annotations

import fcntl
import os
import subprocess
import time
from pathlib import Path

import pytest

from native_helpers import request_command, request_environment, request_host, request_stream, wait_for

TIMEOUT_S = 120
NOTICE = ("folder X is locked: another process is publishing into it; waiting for it to finish "
          "(if nothing else should be running, find it with fuser -v or lsof on the folder)")
PREFIX = {"c": "native: ", "reference": "bobc: "}


@pytest.fixture(scope="module")
def host(tmp_path_factory):
    return request_host(tmp_path_factory)


def command(side, host):
    return request_command(side, host, "train", "--input", "s.bin", "--checkpoint-out", "X/ck",
                           "--predictions", "X/p", "--result", "X/r")


def holds_open(pid: int, folder: Path) -> bool:
    """Whether process `pid` has `folder` open (a lock_folders descriptor)."""
    try:
        names = os.listdir(f"/proc/{pid}/fd")
    except OSError:
        return False
    for name in names:
        try:
            if os.readlink(f"/proc/{pid}/fd/{name}") == str(folder):
                return True
        except OSError:
            continue
    return False


def start_locked(side, host, tmp_path, **env):
    (tmp_path / "s.bin").write_bytes(request_stream([(i * 37 + 11) % 256 for i in range(60)]))
    x = tmp_path / "X"
    x.mkdir()
    held = os.open(x, os.O_RDONLY | os.O_DIRECTORY)
    fcntl.flock(held, fcntl.LOCK_EX)
    err_path = tmp_path / "stderr"
    with open(err_path, "wb") as err:
        run = subprocess.Popen(command(side, host), cwd=tmp_path, env=request_environment(**env),
                               stdout=subprocess.DEVNULL, stderr=err)
    run.stderr = open(err_path, "rb")        # what wait_for shows when the run ends first
    return x, held, err_path, run


def finish(run, held):
    if run.poll() is None:
        run.kill()
        run.wait()
    run.stderr.close()
    if held is not None:
        os.close(held)


@pytest.mark.parametrize("side", ["c", "reference"])
def test_a_short_wait_says_nothing(host, tmp_path, side):
    x, held, err_path, run = start_locked(side, host, tmp_path, BOBC_IO_TEST_LOCK_GRACE_MS="10000")
    try:
        wait_for(lambda: holds_open(run.pid, x), run, "the run's folder lock", within_s=TIMEOUT_S)
        time.sleep(0.3)     # it tries the lock (held) meanwhile; well within its 10 s grace
        assert run.poll() is None and err_path.read_bytes() == b""
        os.close(held)
        held = None
        assert run.wait(timeout=TIMEOUT_S) == 0, err_path.read_bytes()
        assert err_path.read_bytes() == b""          # before: the notice, at once
        assert sorted(os.listdir(x)) == ["ck", "p", "r"]
    finally:
        finish(run, held)


@pytest.mark.parametrize("side", ["c", "reference"])
def test_a_long_wait_says_so_once(host, tmp_path, side):
    x, held, err_path, run = start_locked(side, host, tmp_path)
    try:
        wait_for(lambda: NOTICE.encode() in err_path.read_bytes(), run, "the notice", within_s=TIMEOUT_S)
        assert run.poll() is None
        os.close(held)
        held = None
        assert run.wait(timeout=TIMEOUT_S) == 0, err_path.read_bytes()
        assert err_path.read_bytes().decode() == f"{PREFIX[side]}{NOTICE}\n"
        assert sorted(os.listdir(x)) == ["ck", "p", "r"]
    finally:
        finish(run, held)
