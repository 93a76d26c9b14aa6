"""Probe s28 publish2, finding 1, with real processes: the C request host (NATIVE_DEVICE=memory)
and its reference twin (`bobc run Request.bob native ... --reference`).

A publication writes its temporaries, then waits for the folder lock.  Run B writes its
temporaries for X/p, X/r (its checkpoint in Z), then pauses before the lock
(BOBC_IO_TEST_LOCK_PAUSE_MS, a test-only hook); meanwhile run A (X/ck, X/p, X/r) takes the lock,
writes its journal and is killed between its renames; then B publishes X/p and X/r.  Before, B's
files kept their temporaries' times, older than A's journal, so the next run naming X/ck rolled
A's journal forward over B's result: a mixed set.  Now a publication dates its temporaries under
the lock: B's files are newer than the journal, which is stale: refused (exit 8), B's files kept.
"""
from __future__ import annotations

import os
import signal
import subprocess

import pytest

from native_helpers import request_command, request_environment, request_host, request_stream, wait_for

TIMEOUT_S = 120


stream = request_stream


@pytest.fixture(scope="module")
def host(tmp_path_factory):
    return request_host(tmp_path_factory)


command, environment = request_command, request_environment


@pytest.mark.parametrize("side", ["c", "reference"])
def test_a_publication_that_waited_for_the_lock_is_newer_than_a_journal_written_meanwhile(host, tmp_path, side):
    for name in ("X", "Z"):
        (tmp_path / name).mkdir()
    for k in (1, 2):        # two streams, so the two runs' outputs differ
        (tmp_path / f"s{k}.bin").write_bytes(stream([(i * 37 + 11 + k * 13) % 256 for i in range(60)]))
    x = tmp_path / "X"
    run_b = subprocess.Popen(command(side, host, "train", "--input", "s2.bin", "--checkpoint-out", "Z/ck",
                                     "--predictions", "X/p", "--result", "X/r"),
                             cwd=tmp_path, env=environment(BOBC_IO_TEST_LOCK_PAUSE_MS="10000"),
                             stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    run_a = None
    try:
        # B's temporaries are written; it now waits (before the lock) for 10 s
        wait_for(lambda: sum(n.startswith((".p.tmp-", ".r.tmp-")) for n in os.listdir(x)) == 2, run_b,
                 "run B's temporaries")
        run_a = subprocess.Popen(command(side, host, "train", "--input", "s1.bin", "--checkpoint-out", "X/ck",
                                         "--predictions", "X/p", "--result", "X/r"),
                                 cwd=tmp_path, env=environment(BOBC_IO_TEST_PAUSE_MS="10000"),
                                 stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        wait_for(lambda: (x / ".ck.bob-journal").exists() and (x / "p").exists(), run_a,
                 "run A's first rename")       # A holds the lock, its journal written
    finally:
        if run_a is not None:
            run_a.send_signal(signal.SIGKILL)
            run_a.wait()
    assert run_b.poll() is None, "run B published before run A was killed: the case did not arise"
    assert run_b.wait(timeout=TIMEOUT_S) == 0, run_b.stderr.read()
    run_b.stderr.close()
    run_a.stderr.close()
    assert (x / ".ck.bob-journal").exists()
    files = {name: (x / name).read_bytes() for name in ("p", "r", "ck")}   # B's p, r; A's first-period ck
    recovery = subprocess.run(command(side, host, "train", "--input", "nonexistent", "--checkpoint-out", "X/ck",
                                      "--predictions", "X/p", "--result", "X/r"),
                              cwd=tmp_path, env=environment(), capture_output=True, timeout=TIMEOUT_S)
    assert recovery.returncode == 8, recovery.stderr
    assert b"journal X/.ck.bob-journal: stale: " in recovery.stderr, recovery.stderr
    assert {name: (x / name).read_bytes() for name in ("p", "r", "ck")} == files    # nothing rolled forward
