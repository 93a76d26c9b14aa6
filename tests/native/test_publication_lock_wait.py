"""A run that finds its folder locked says so, then waits (probe s29 lockwait), with real
processes: the C request host (NATIVE_DEVICE=memory) and its reference twin (`bobc run
Request.bob native ... --reference`).

Publications into one folder are serialised by an flock on the folder (docs/runtime.md,
"Files": concurrent invocations).  Before, a run whose folder another process held locked (a
host stopped with Ctrl-Z, a long publication of a big checkpoint) blocked without a word: a hang
with no explanation.  Now the lock is tried without blocking first and, when it is held, one line
on stderr names the folder and says what to do, the C host's words and the reference's the same
after the name each prints first; then the run waits.  Ctrl-C while it waits stops it at once,
the lock still held elsewhere: `interrupted`, nothing left in the folder (its temporaries
removed).

Here the test process holds the lock (fcntl.flock on the folder's descriptor), either from the
start (the run waits in its recovery, before it reads anything) or from when the run's
temporaries are written (BOBC_IO_TEST_LOCK_PAUSE_MS, a test-only pause before the publication
takes the lock: the run waits with its temporaries written).
"""
from __future__ import annotations

import fcntl
import os
import signal
import subprocess
from pathlib import Path

import pytest

from native_helpers import request_command, request_environment, request_host, request_stream, wait_for

TIMEOUT_S = 120
PAUSE_MS = 3000         # the run's pause before its publication lock: the test takes the lock meanwhile
NOTICE = ("folder X is locked: another process is publishing into it; waiting for it to finish "
          "(if nothing else should be running, find it with fuser -v or lsof on the folder)")
PREFIX = {"c": "native: ", "reference": "bobc: "}      # each side's name before its notices


def interruptible() -> None:
    """The run's SIGINT back to its default: a test suite started in the background of a
    non-interactive shell (CI's) has it ignored, which every child inherits, and a host keeps an
    ignored SIGINT ignored (as a shell's `cmd &` asks)."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)

stream = request_stream


@pytest.fixture(scope="module")
def host(tmp_path_factory):
    return request_host(tmp_path_factory)


def command(side, host, folder):
    return request_command(side, host, "train", "--input", "s.bin", "--checkpoint-out", f"{folder}/ck",
                           "--predictions", f"{folder}/p", "--result", f"{folder}/r")


environment = request_environment


def lock(folder: Path, block: bool = True) -> int:
    """The folder's lock, as a host takes it: the descriptor that holds it (close it to release)."""
    fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
    fcntl.flock(fd, fcntl.LOCK_EX | (0 if block else fcntl.LOCK_NB))
    return fd


def temporaries(folder: Path) -> set:
    """The final publication's temporaries in `folder` (`.NAME.tmp-XXXXXX`)."""
    return {n for n in os.listdir(folder) if n.startswith((".ck.tmp-", ".p.tmp-", ".r.tmp-"))}


@pytest.mark.parametrize("then", ["release", "interrupt"])
@pytest.mark.parametrize("held", ["from-start", "at-publication"])
@pytest.mark.parametrize("side", ["c", "reference"])
def test_a_run_says_it_waits_for_a_locked_folder(host, tmp_path, side, held, then):
    (tmp_path / "s.bin").write_bytes(stream([(i * 37 + 11) % 256 for i in range(60)]))
    for name in ("X", "alone"):
        (tmp_path / name).mkdir()
    x = tmp_path / "X"
    alone = subprocess.run(command(side, host, "alone"), cwd=tmp_path, env=environment(), capture_output=True,
                           timeout=TIMEOUT_S)    # the same run with no lock in its way: what X must hold
    assert alone.returncode == 0 and not alone.stderr, alone.stderr
    expected = {name: (tmp_path / "alone" / name).read_bytes() for name in ("ck", "p", "r")}

    err_path = tmp_path / "stderr"
    held_fd = lock(x) if held == "from-start" else None
    with open(err_path, "wb") as err:
        env = environment(**({"BOBC_IO_TEST_LOCK_PAUSE_MS": str(PAUSE_MS)} if held == "at-publication" else {}))
        run = subprocess.Popen(command(side, host, "X"), cwd=tmp_path, env=env, stdout=subprocess.DEVNULL,
                               stderr=err, preexec_fn=interruptible)
    try:
        run.stderr = open(err_path, "rb")       # what wait_for shows when the run ends first
        kept = set()        # what X holds that the final publication did not put there
        if held == "at-publication":
            wait_for(lambda: len(temporaries(x)) == 3, run, "the final publication's temporaries")
            held_fd = lock(x, block=False)      # the run is in its pause, before its lock
            assert len(temporaries(x)) == 3, f"the run published before the test took the lock: {os.listdir(x)}"
            kept = set(os.listdir(x)) - temporaries(x)   # the request's interval checkpoint, published before
            assert kept <= {"ck"}, kept
        wait_for(lambda: NOTICE.encode() in err_path.read_bytes(), run, "the notice", within_s=TIMEOUT_S)
        said = err_path.read_bytes().decode()
        assert said == f"{PREFIX[side]}{NOTICE}\n", said        # one line, the same words on both sides
        assert run.poll() is None
        assert set(os.listdir(x)) - temporaries(x) == kept, "published while the folder was locked"
        if then == "interrupt":
            run.send_signal(signal.SIGINT)
            # it stops while the lock is still held: it never needed the lock to end
            status = run.wait(timeout=TIMEOUT_S)
            assert status == (-signal.SIGINT if side == "c" else 130), status
            assert err_path.read_bytes().decode() == f"{PREFIX[side]}{NOTICE}\n{PREFIX[side]}interrupted\n"
            assert set(os.listdir(x)) == kept, "an interrupted run left files behind"
            return
        os.close(held_fd)
        held_fd = None
        assert run.wait(timeout=TIMEOUT_S) == 0, err_path.read_bytes()
        assert err_path.read_bytes().decode() == f"{PREFIX[side]}{NOTICE}\n"
        assert sorted(os.listdir(x)) == ["ck", "p", "r"]           # no temporary, no journal left
        assert {name: (x / name).read_bytes() for name in ("ck", "p", "r")} == expected
    finally:
        if run.poll() is None:
            run.kill()
            run.wait()
        run.stderr.close()
        if held_fd is not None:
            os.close(held_fd)


@pytest.mark.parametrize("side", ["c", "reference"])
def test_no_notice_when_the_folder_is_free(host, tmp_path, side):
    """The lock is tried first: a run that finds it free says nothing about it."""
    (tmp_path / "s.bin").write_bytes(stream([(i * 37 + 11) % 256 for i in range(60)]))
    (tmp_path / "X").mkdir()
    done = subprocess.run(command(side, host, "X"), cwd=tmp_path, env=environment(), capture_output=True,
                          timeout=TIMEOUT_S)
    assert done.returncode == 0 and done.stderr == b"", done.stderr
