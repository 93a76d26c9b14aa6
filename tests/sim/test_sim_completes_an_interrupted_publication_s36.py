"""`bobc sim` completes a publication a kill interrupted before it reads its inputs (probe s36 resume
finding 1).

docs/runtime.md: every later invocation of the host or of `bobc run --reference` first completes a
journal left in its outputs' folders; docs/simulator.md: sim has the same files as they.  Before,
`bobc sim` read its inputs as it found them: resumed in place after a run was killed between its
renames, it trained from the checkpoint *before* the interrupted run's (that run's updates lost
without a word), overwrote the journal with its own and left the interrupted run's temporaries
beside the outputs.
"""
from __future__ import annotations

import os
import struct
import types

import pytest

from bobc.cli import main
from bobc.reference import safe_io

from .conftest import PLAN

NAMES = ("p.bin", "r.bin", "c.bin")          # rename order: the checkpoint last


def _step(path) -> int:
    """The envelope's step (docs/formats.md, "Checkpoint envelope": u64 at byte 16)."""
    data = path.read_bytes()
    assert data[:8] == b"BOBCENV1"
    return struct.unpack_from("<Q", data, 16)[0]


def _outputs(folder):
    return ["--predictions", str(folder / "p.bin"), "--result", str(folder / "r.bin"),
            "--checkpoint-out", str(folder / "c.bin")]


def _interrupt_a_publication(folder, files: dict, monkeypatch):
    """What a kill between the first and second rename leaves: the journal, the predictions renamed,
    the result's and the checkpoint's temporaries beside the old files (safe_io's test pause, a
    KeyboardInterrupt raised in it, as tests/reference/test_publication_interrupted.py does)."""
    def sleep(_seconds):
        raise KeyboardInterrupt
    monkeypatch.setenv(safe_io.PAUSE_VARIABLE, "1")
    monkeypatch.setattr(safe_io, "time", types.SimpleNamespace(sleep=sleep))
    outputs = safe_io.OutputSet()
    for name in NAMES:
        outputs.add(folder / name, name)
        outputs.stage(name, files[name])
    with pytest.raises(KeyboardInterrupt):
        outputs.publish()
    monkeypatch.undo()
    left = sorted(os.listdir(folder))
    assert ".c.bin.bob-journal" in left and any(n.startswith(".c.bin.tmp-") for n in left), left


def test_sim_resumed_in_place_after_a_kill_trains_from_the_interrupted_runs_checkpoint(tmp_path, case,
                                                                                       monkeypatch, capsys):
    record = tmp_path / "record.bin"
    record.write_bytes(case[0])
    run = ["run", str(PLAN), "train", "--reference", "--input", str(record)]
    work, second, alone = tmp_path / "work", tmp_path / "second", tmp_path / "alone"
    for folder in (work, second, alone):
        folder.mkdir()
    assert main([*run, *_outputs(work)]) == 0                                        # step 10
    assert main([*run, "--checkpoint", str(work / "c.bin"), *_outputs(second)]) == 0  # step 20
    assert _step(work / "c.bin") == 10 and _step(second / "c.bin") == 20
    # the second run, had it published in `work` (resumed in place), killed between its renames
    _interrupt_a_publication(work, {name: (second / name).read_bytes() for name in NAMES}, monkeypatch)
    assert _step(work / "c.bin") == 10
    capsys.readouterr()

    sim = ["sim", str(PLAN), "train", "--input", str(record)]
    assert main([*sim, "--checkpoint", str(work / "c.bin"), *_outputs(work)]) == 0
    said = capsys.readouterr().err
    assert "completed an interrupted publication from" in said, said
    # trained from the interrupted run's step 20, not from the step 10 before it
    assert _step(work / "c.bin") == 30
    assert sorted(os.listdir(work)) == ["c.bin", "p.bin", "r.bin"]                   # nothing left over
    # the same files as sim resumed from that run's checkpoint where nothing was interrupted
    assert main([*sim, "--checkpoint", str(second / "c.bin"), *_outputs(alone)]) == 0
    for name in NAMES:
        assert (work / name).read_bytes() == (alone / name).read_bytes(), name
