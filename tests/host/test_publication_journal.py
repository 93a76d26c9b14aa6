"""The probe's (notes s27, probe-runtime.md) publication findings, end to end: the Bob host as
`bobc build` makes it and `bobc run --reference`, on this GPU-less machine (the host checks
every file, then stops at exit 6, no GPU).  tests/reference/test_safe_io_journal.py holds the
two implementations (runtime_c/host_io.c, bobc.reference.safe_io) together case by case; here
the hosts themselves give the verdicts (docs/runtime.md, "Files").
"""
from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
PLAN = REPO / "examples/bob/Bob/Build/NativeHost.bob"
TIMEOUT_S = 120


def run(command, cwd, env=None) -> subprocess.CompletedProcess:
    return subprocess.run(list(map(str, command)), cwd=cwd, env=env, capture_output=True, text=True,
                          timeout=TIMEOUT_S)


@pytest.fixture(scope="module")
def host(tmp_path_factory):
    out = tmp_path_factory.mktemp("host") / "bob-host"
    done = run([sys.executable, "-m", "bobc", "build", PLAN, "-o", out], cwd=out.parent)
    assert done.returncode == 0, done.stderr
    return out


@pytest.fixture(scope="module")
def record(tmp_path_factory):
    from bob_model.formats import InputRecord, encode_input_record
    import numpy as np

    path = tmp_path_factory.mktemp("record") / "record.bin"
    path.write_bytes(encode_input_record(InputRecord((np.arange(256) * 7 + 3) % 256, [119, 116, 32])))
    return path


def reference(*arguments):
    return [sys.executable, "-m", "bobc", "run", PLAN, *arguments, "--reference"]


def outputs(prefix_predictions, prefix_checkpoint):
    return ["--checkpoint-out", f"{prefix_checkpoint}/c.bin", "--predictions", f"{prefix_predictions}/p.bin",
            "--result", f"{prefix_predictions}/r.bin"]


def test_a_leftover_journal_never_puts_an_older_result_over_a_newer_one(host, record, tmp_path):
    """Finding 1: run 1 (checkpoint in B, predictions and result in A) is killed between its
    renames; run 2 keeps A's paths, its checkpoint in C, and succeeds; run 3 names B/c.bin and
    D's paths.  Before, run 3 completed run 1's journal and put run 1's result over run 2's.
    Now the journal, older than run 2's A/p.bin, is stale: exit 8, everything left as it is."""
    for name in "ABCD":
        (tmp_path / name).mkdir()
    env = {**os.environ, "BOBC_IO_TEST_PAUSE_MS": "4000"}
    run1 = subprocess.Popen(list(map(str, reference("train", "--input", record, *outputs("A", "B")))),
                            cwd=tmp_path, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    deadline = time.monotonic() + TIMEOUT_S
    try:
        while not (tmp_path / "A/p.bin").exists():        # the first rename: predictions
            assert run1.poll() is None, run1.stderr.read()
            assert time.monotonic() < deadline, "run 1's publication never began"
            time.sleep(0.01)
    finally:
        run1.send_signal(signal.SIGKILL)
        run1.wait()
    journal = tmp_path / "B/.c.bin.bob-journal"
    assert journal.exists() and not (tmp_path / "A/r.bin").exists()
    left = sorted(p.name for p in (tmp_path / "B").iterdir()) + sorted(p.name for p in (tmp_path / "A").iterdir())
    time.sleep(0.05)                                       # run 2 comes later than run 1's journal
    run2 = run(reference("train", "--input", record, *outputs("A", "C")), cwd=tmp_path)
    assert run2.returncode == 0, run2.stderr
    newer = {name: (tmp_path / name).read_bytes() for name in ("A/p.bin", "A/r.bin", "C/c.bin")}
    for label, command in (("host", [host, "predict", "--input", record, "--checkpoint", "C/c.bin",
                                     *outputs("D", "B")]),
                           ("reference", reference("predict", "--input", record, "--checkpoint", "C/c.bin",
                                                   *outputs("D", "B")))):
        run3 = run(command, cwd=tmp_path)
        assert run3.returncode == 8, (label, run3.stderr)
        assert "B/.c.bin.bob-journal" in run3.stderr and "stale" in run3.stderr, run3.stderr
        assert f"{tmp_path.resolve()}/A/p.bin was replaced after the journal was written" in run3.stderr
        assert "remove it and the temporaries it lists" in run3.stderr
        assert "completed an interrupted publication" not in run3.stderr
        assert {name: (tmp_path / name).read_bytes() for name in newer} == newer, label
        assert sorted(p.name for p in (tmp_path / "B").iterdir()) + \
            sorted(p.name for p in (tmp_path / "A").iterdir() if p.name not in ("p.bin", "r.bin")) == \
            [n for n in left if n not in ("p.bin", "r.bin")], "the journal and its temporaries are left"
        assert not list((tmp_path / "D").iterdir())


def test_a_planted_journal_does_not_move_a_file_over_an_output(host, record, tmp_path):
    """Finding 2: a journal in a shared folder naming a file elsewhere as a "temporary" (before,
    the host moved the user's notes over its predictions) is damaged: exit 8, nothing moved."""
    shared, private = tmp_path / "shared", tmp_path / "private"
    shared.mkdir()
    private.mkdir()
    notes = private / "notes.txt"
    notes.write_bytes(b"my precious data\n")
    target, destination = str(notes), str(shared / "p.bin")
    planted = f"bob-journal 1 1\n{len(target)} {target}\n{len(destination)} {destination}\nend\n"
    (shared / ".anything.bob-journal").write_text(planted)
    for label, command in (("host", [host, "train", "--input", record, "--checkpoint-out", "c.bin",
                                     "--predictions", "p.bin", "--result", "r.bin"]),
                           ("reference", reference("train", "--input", record, "--checkpoint-out", "c.bin",
                                                   "--predictions", "p.bin", "--result", "r.bin"))):
        done = run(command, cwd=shared)
        assert done.returncode == 8, (label, done.stderr)
        assert "./.anything.bob-journal" in done.stderr and "a damaged publication journal" in done.stderr
        assert "is not a .NAME.tmp-XXXXXX file beside its destination" in done.stderr
        assert notes.read_bytes() == b"my precious data\n"
        assert sorted(p.name for p in shared.iterdir()) == [".anything.bob-journal"]


@pytest.mark.skipif(shutil.which("chattr") is None, reason="needs chattr")
def test_an_immutable_output_is_refused_before_the_run(host, record, tmp_path):
    """Finding 5: before, the host went on to the GPU (here: exit 6), and the reference published
    the predictions before its rename over the immutable result failed, leaving a journal."""
    for name, data in (("p.bin", b"OLD PREDICTIONS"), ("r.bin", b"OLD RESULT")):
        (tmp_path / name).write_bytes(data)
    if subprocess.run(["chattr", "+i", str(tmp_path / "r.bin")], capture_output=True).returncode != 0:
        pytest.skip("this filesystem or user cannot set the immutable attribute")
    try:
        for label, command in (("host", [host, "train", "--input", record, "--checkpoint-out", "c.bin",
                                         "--predictions", "p.bin", "--result", "r.bin"]),
                               ("reference", reference("train", "--input", record, "--checkpoint-out", "c.bin",
                                                       "--predictions", "p.bin", "--result", "r.bin"))):
            done = run(command, cwd=tmp_path)
            assert done.returncode == 8, (label, done.stderr)
            assert "r.bin" in done.stderr and "has the immutable attribute" in done.stderr, done.stderr
            assert "chattr -i" in done.stderr
            assert sorted(p.name for p in tmp_path.iterdir()) == ["p.bin", "r.bin"], label
            assert (tmp_path / "p.bin").read_bytes() == b"OLD PREDICTIONS"
    finally:
        subprocess.run(["chattr", "-i", str(tmp_path / "r.bin")], capture_output=True)


def test_the_hosts_message_keeps_its_reason_for_a_long_path(host, record, tmp_path):
    """Finding 6: a 600-byte output folder; before, the host's message ended inside the path."""
    deep = "/".join(["d" * 200] * 3)
    (tmp_path / deep).mkdir(parents=True)
    (tmp_path / deep / "link").symlink_to("/etc/passwd")
    for name, reason in (("nodir/c.bin", "/nodir does not exist; create it first; nothing was written"),
                         ("link", "is a symbolic link; only a regular file (or nothing) is replaced; "
                                  "nothing was written")):
        done = run([host, "train", "--input", record, "--checkpoint-out", f"{deep}/{name}", "--predictions",
                    "p.bin", "--result", "r.bin"], cwd=tmp_path)
        assert done.returncode == 8, done.stderr
        lines = done.stderr.splitlines()
        assert len(lines) == 1 and lines[0].endswith(reason), done.stderr
        assert lines[0].startswith(f"bob-host: error: output {'d' * 32}") and "..." in lines[0]
