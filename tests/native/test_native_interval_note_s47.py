"""The native host's last publication failing after an interval checkpoint of its own run was
published says which checkpoint stays (probe s47 faultinject finding 6): a Fail or a fault said
it (np_request_failure_note), but a failure of the last publication itself (rt_io_publish, after
the program ended) said `... (nothing was published)` alone, while ck.bin held this run's
interval checkpoint.  Both hosts now end that line as every other failure's after an interval
publication: `; publication 1 of 2 (step 3) stays at ck.bin; nothing else was published`
(runtime_c/host_io.c rt_io_interval_note, the plan host's words too).

plans/Native/Request.bob's train request publishes twice, the first at step 3 (two periods of
three updates from a fresh state: test_native_request.py).  Each publication pauses between its
temporaries and its lock (BOBC_IO_TEST_LOCK_PAUSE_MS, host_io.h; safe_io alike): once ck.bin is
there and the last publication's predictions temporary is written, p.bin is made a folder, and
the last publication refuses it (`became a folder during the run (nothing was published)`).  The
C host is static (no LD_PRELOAD fault shim reaches it), hence this way of failing it."""
from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest

from native_helpers import PLANS, load_module, program_bytes, request_stream, run_c, run_reference, write_host

ARGS = ["train", "--input", "s.bin", "--checkpoint-out", "ck.bin", "--predictions", "p.bin", "--result", "r.bin"]
TOKENS = [(i * 37 + 11) % 256 for i in range(60)]
LINE = (b"native: output p.bin (--predictions): became a folder during the run; publication 1 of 2 (step 3) stays "
        b"at ck.bin; nothing else was published\n")
PAUSE = {"BOBC_IO_TEST_LOCK_PAUSE_MS": "1500"}


@pytest.fixture(scope="module")
def code():
    return program_bytes(load_module(PLANS / "Native" / "Request.bob"), "requestProgram")


def folder_at_the_last_publication(folder: Path) -> threading.Thread:
    """Makes p.bin a folder once ck.bin (the interval's) and the predictions' temporary (the
    last publication's) are there, within 60 s."""
    def watch():
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            if (folder / "ck.bin").exists() and any(p.name.startswith(".p.bin.tmp-") for p in folder.iterdir()):
                (folder / "p.bin").mkdir()
                return
            time.sleep(0.01)
    thread = threading.Thread(target=watch)
    thread.start()
    return thread


def left_behind(folder: Path) -> None:
    """s.bin, the folder p.bin and ck.bin; ck.bin the interval's envelope, at step 3 (its
    header's u64 at byte 16, docs/formats.md)."""
    assert sorted(p.name for p in folder.iterdir()) == ["ck.bin", "p.bin", "s.bin"]
    data = (folder / "ck.bin").read_bytes()
    assert data[:8] == b"BOBCENV1" and int.from_bytes(data[16:24], "little") == 3


def test_the_last_publication_failing_says_which_interval_checkpoint_stays_s47(tmp_path, code, monkeypatch):
    host = write_host(tmp_path, "request-host", code)
    for side in ("c", "reference"):
        folder = tmp_path / side
        folder.mkdir()
        (folder / "s.bin").write_bytes(request_stream(TOKENS))
        watcher = folder_at_the_last_publication(folder)
        if side == "c":
            outcome = run_c(host, folder, ARGS, PAUSE)
        else:
            monkeypatch.setenv("BOBC_IO_TEST_LOCK_PAUSE_MS", PAUSE["BOBC_IO_TEST_LOCK_PAUSE_MS"])
            outcome = run_reference(code, folder, ARGS, name=str(host))
        watcher.join()
        assert (outcome.status, outcome.stderr) == (8, LINE), side
        left_behind(folder)
