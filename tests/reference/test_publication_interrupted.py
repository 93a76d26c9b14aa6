"""Ctrl-C between a publication's renames (probe s31 signals finding 1).

Before, `OutputSet.publish`'s `finally:` removed the temporaries still to be renamed even after
its journal was on disk (a KeyboardInterrupt skipped the line that hands them to the journal): a
Ctrl-C between two renames left outputs of two runs side by side, and the next invocation said it
"completed an interrupted publication" without renaming anything.  Now SIGINT, SIGTERM and SIGHUP
wait from the journal's write to the last rename (the command then ends as interrupted), and a
journal on disk owns its temporaries whatever ends the publication: the outputs a user sees are
from one run (README, "What a user is promised").
"""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
import types
from pathlib import Path

import pytest

from bobc.reference import safe_io

REPO = Path(__file__).resolve().parents[2]
LINREG = REPO / "examples/linear_regression/LinReg/Build/NativeHost.bob"
TIMEOUT_S = 120
NAMES = ("p.bin", "r.bin", "c.bin")          # rename order: the checkpoint last


def publication(folder: Path, run: str) -> safe_io.OutputSet:
    outputs = safe_io.OutputSet()
    for name in NAMES:
        outputs.add(folder / name, name)
        outputs.stage(name, f"{name} of run {run}".encode())
    return outputs


def contents(folder: Path) -> dict:
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir())}


def pausing(monkeypatch, between):
    """safe_io's test pause between two renames, doing `between()` at the first one."""
    calls = []

    def sleep(seconds):
        calls.append(seconds)
        if len(calls) == 1:
            between()
    monkeypatch.setenv(safe_io.PAUSE_VARIABLE, "1")
    monkeypatch.setattr(safe_io, "time", types.SimpleNamespace(sleep=sleep))
    return calls


def test_ctrl_c_between_renames_waits_for_the_last_rename(tmp_path, monkeypatch):
    for name in NAMES:
        (tmp_path / name).write_bytes(f"{name} of run 1".encode())
    calls = pausing(monkeypatch, lambda: signal.raise_signal(signal.SIGINT))
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)      # Ctrl-C's own action
    try:
        with pytest.raises(KeyboardInterrupt):
            publication(tmp_path, "2").publish()
        assert signal.getsignal(signal.SIGINT) == signal.default_int_handler       # put back
    finally:
        signal.signal(signal.SIGINT, previous)
    assert calls, "the publication never paused between its renames"
    # the interruption came after the renames: every output is run 2's, no journal, no temporary
    assert contents(tmp_path) == {name: f"{name} of run 2".encode() for name in sorted(NAMES)}


def test_a_journal_on_disk_keeps_its_temporaries_and_the_next_run_completes_it(tmp_path, monkeypatch, capfd):
    """Whatever ends the publication after its journal was written (here a KeyboardInterrupt raised
    in the pause itself, as where no signal can be held back), the temporaries it lists stay, and
    the recovery renames every one of them: all outputs of run 2, and its notice is true."""
    for name in NAMES:
        (tmp_path / name).write_bytes(f"{name} of run 1".encode())

    def interrupt():
        raise KeyboardInterrupt
    pausing(monkeypatch, interrupt)
    with pytest.raises(KeyboardInterrupt):
        publication(tmp_path, "2").publish()
    left = contents(tmp_path)
    assert left["p.bin"] == b"p.bin of run 2" and left["c.bin"] == b"c.bin of run 1"       # between renames
    assert ".c.bin.bob-journal" in left
    assert sorted(n.split(".tmp-")[0] for n in left if ".tmp-" in n) == [".c.bin", ".r.bin"], left
    monkeypatch.delenv(safe_io.PAUSE_VARIABLE)
    capfd.readouterr()
    safe_io.recover([tmp_path / name for name in NAMES])
    said = capfd.readouterr().err
    assert said.startswith("bobc: completed an interrupted publication from ") and said.count("\n") == 1, said
    assert contents(tmp_path) == {name: f"{name} of run 2".encode() for name in sorted(NAMES)}


def test_bobc_run_reference_interrupted_between_renames_leaves_one_runs_outputs(tmp_path):
    """The probe's repro: `bobc run --reference` resumed in place, SIGINT while it pauses between
    its renames (BOBC_IO_TEST_PAUSE_MS); then an invocation that recovers.  Every output is from
    one run, and nothing is said to be completed that was not."""
    env = {**os.environ, "PYTHONPATH": str(REPO / "compiler"), "TMPDIR": str(tmp_path)}
    record = tmp_path / "record.bin"
    subprocess.run([sys.executable, str(REPO / "examples/linear_regression/make_record.py"), "-o", str(record)],
                   check=True, capture_output=True, timeout=TIMEOUT_S)
    bobc = [sys.executable, "-m", "bobc", "run", str(LINREG), "train", "--reference"]
    outputs = ["--checkpoint-out", "ck.bin", "--predictions", "pred.bin", "--result", "res.bin"]
    work = tmp_path / "w"
    work.mkdir()
    first = subprocess.run([*bobc, "--input", str(record), *outputs], cwd=work, env=env, capture_output=True,
                           timeout=TIMEOUT_S)
    assert first.returncode == 0, first.stderr
    run1 = {name: (work / name).read_bytes() for name in ("pred.bin", "res.bin", "ck.bin")}
    second = subprocess.Popen([*bobc, "--input", str(record), "--checkpoint", "ck.bin", *outputs], cwd=work,
                              env={**env, safe_io.PAUSE_VARIABLE: "1500"}, stdout=subprocess.DEVNULL,
                              stderr=subprocess.PIPE, preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    try:
        # the first rename done (the prediction's temporary gone), the journal still there: between renames
        while not ((work / ".ck.bin.bob-journal").exists()
                   and not any(n.startswith(".pred.bin.tmp-") for n in os.listdir(work))):
            assert second.poll() is None, second.stderr.read()
            time.sleep(0.01)
        second.send_signal(signal.SIGINT)
        assert second.wait(timeout=TIMEOUT_S) == 130
        assert second.stderr.read() == b"bobc: interrupted\n"
    finally:
        if second.poll() is None:
            second.kill()
            second.wait()
        second.stderr.close()
    third = subprocess.run([*bobc, "--input", "missing.bin", *outputs], cwd=work, env=env, capture_output=True,
                           timeout=TIMEOUT_S)
    assert third.returncode == 3, third.stderr
    assert b"completed an interrupted publication" not in third.stderr     # nothing was left to complete
    now = {name: (work / name).read_bytes() for name in run1}
    changed = {name for name in run1 if now[name] != run1[name]}
    assert changed in (set(), set(run1)), f"outputs of two runs side by side: new {sorted(changed)}"
    assert sorted(os.listdir(work)) == ["ck.bin", "pred.bin", "res.bin"]
