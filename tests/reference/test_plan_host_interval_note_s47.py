"""A plan host's failure after an interval checkpoint of its own run was published says which
checkpoint stays at --checkpoint-out (probe s47 faultinject finding 6).

Synthetic/AllSteps.bob publishes twice in a train request: the first CheckpointPublish (0
updates, AllSteps.bob) is an interval's, published as it ends; the last waits for the other
outputs.  With the last publication failing (the predictions' temporary cannot be synced:
ENOSPC), `bobc run --reference` and `bobc sim` said `... (nothing was published)` although
ck.bin now held this run's interval checkpoint (it did not exist before): a user reading it took
ck.bin for the older state.  They now end as the native host's line does (docs/runtime.md,
"Files"): `; publication 1 of 2 (step 0) stays at PATH; nothing else was published`, in
one wording with the C hosts (runtime_c/host_io.c rt_io_interval_note, which plan_host.c and the
native host print; its own cases in runtime_c/tests/test_host_runtime.c test_interval_note_s47).
The C plan host runs only on a GPU: here the helper it prints is compared with the reference's
through runtime_c/tests/rt_tool.  The expected lines are written out by hand."""
from __future__ import annotations

import argparse
import errno
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

REPO = Path(__file__).resolve().parents[2]
ALL_STEPS = REPO / "tests/platform/Synthetic/AllSteps.bob"
sys.path.insert(0, str(REPO / "tests/platform"))
sys.path.insert(0, str(Path(__file__).resolve().parent))
from test_safe_io_journal import tool  # noqa: E402, F401 -- the rt_tool fixture

ENOSPC = os.strerror(errno.ENOSPC)


def record_bytes() -> bytes:
    from bob_model.formats import InputRecord, encode_input_record
    return encode_input_record(InputRecord((np.arange(256) * 7 + 3) % 256, [97, 98, 99]))


def no_room_for_predictions(monkeypatch):
    """The predictions' temporary (`.p.bin.tmp-XXXXXX`, written only at the last publication)
    cannot be synced: the file system is full."""
    real = os.fsync

    def fsync(fd):
        if os.path.basename(os.readlink(f"/proc/self/fd/{fd}")).startswith(".p.bin.tmp-"):
            raise OSError(errno.ENOSPC, ENOSPC)
        return real(fd)
    monkeypatch.setattr(os, "fsync", fsync)


def expected(folder: Path) -> str:
    from bobc.reference.safe_io import shown
    return (f"output {shown(str(folder / 'p.bin'))}: fsync of the temporary file failed: {ENOSPC} (the file system "
            f"of {shown(str(folder))} is full: free space there, then run again); publication 1 of 2 (step 0) stays "
            f"at {shown(str(folder / 'ck.bin'))}; nothing else was published")


def left_behind(folder: Path) -> None:
    """Only ck.bin was written: the interval's checkpoint, at step 0 (AllSteps.bob's first
    CheckpointPublish carries 0 updates of a fresh state); the envelope's step read from its
    header (docs/formats.md: u64 at byte 16 after the magic)."""
    assert sorted(p.name for p in folder.iterdir()) == ["ck.bin", "record.bin"]
    data = (folder / "ck.bin").read_bytes()
    assert data[:8] == b"BOBCENV1" and int.from_bytes(data[16:24], "little") == 0


def test_the_reference_plan_host_says_which_interval_checkpoint_stays_s47(tmp_path, monkeypatch):
    import synthetic_support

    from bobc.commands import run

    plan = synthetic_support.load("AllSteps", "synAllStepsHost")[1]
    (tmp_path / "record.bin").write_bytes(record_bytes())
    no_room_for_predictions(monkeypatch)
    kernels = {region.identity: (lambda memory, context: None) for region in plan.program.regions}
    args = argparse.Namespace(operation="train", input=str(tmp_path / "record.bin"), checkpoint=None,
                              checkpoint_out=str(tmp_path / "ck.bin"), predictions=str(tmp_path / "p.bin"),
                              result=str(tmp_path / "r.bin"))
    with pytest.raises(run.HostRefusal) as refused:
        run.run_plan_host(plan, kernels, args)
    assert refused.value.exit_code == 8
    assert refused.value.message == expected(tmp_path)
    left_behind(tmp_path)


def test_bobc_sim_says_which_interval_checkpoint_stays_s47(tmp_path, monkeypatch, capsys):
    from bobc.cli import main

    (tmp_path / "record.bin").write_bytes(record_bytes())
    no_room_for_predictions(monkeypatch)
    status = main(["sim", str(ALL_STEPS), "train", "--target", "sm_86", "--entry", "synAllStepsHost", "-I",
                   str(REPO / "examples/bob"), "--input", str(tmp_path / "record.bin"), "--checkpoint-out",
                   str(tmp_path / "ck.bin"), "--predictions", str(tmp_path / "p.bin"), "--result",
                   str(tmp_path / "r.bin")])
    assert status == 8
    assert capsys.readouterr().err == f"bobc sim: error: {expected(tmp_path)}\n"
    left_behind(tmp_path)


# the message -> the line after interval publication 1 of 2 (step 3) is at ck.bin
LINES = {
    # a publication's refusal: its "(nothing was published)" is belied by ck.bin, so left out
    "output p.bin: fsync of the temporary file failed: No space left on device (nothing was published)":
        "output p.bin: fsync of the temporary file failed: No space left on device; publication 1 of 2 (step 3) "
        "stays at ck.bin; nothing else was published",
    # a Commands step's Fail (runtime_c/plan_commands.c): its "; nothing was published" likewise
    "step 7 (commands): command 0 (Fail): no; nothing was published":
        "step 7 (commands): command 0 (Fail): no; publication 1 of 2 (step 3) stays at ck.bin; nothing else was "
        "published",
    # an output's refusal says nothing of publication: the note follows it
    "output ck.bin (--checkpoint-out): is a folder; only a regular file (or nothing) is replaced; nothing was written":
        "output ck.bin (--checkpoint-out): is a folder; only a regular file (or nothing) is replaced; nothing was "
        "written; publication 1 of 2 (step 3) stays at ck.bin; nothing else was published",
    "step 4 (Submit): the GPU faulted":
        "step 4 (Submit): the GPU faulted; publication 1 of 2 (step 3) stays at ck.bin; nothing else was published",
}
# a kept journal: part of the last publication is in place and the line says what to do: as it is
KEPT = ("output r.bin (--result): rename failed: Input/output error (the journal ./.ck.bin.bob-journal is kept: "
        "once r.bin can be replaced, the next invocation naming these outputs completes the publication; to keep "
        "the files as they are instead, remove the journal and the temporaries it lists)")


def test_one_wording_in_the_c_hosts_and_the_reference_s47(tool):  # noqa: F811
    from bobc.reference.safe_io import interval_note, kept_journal

    assert KEPT.endswith(f"({kept_journal('./.ck.bin.bob-journal', 'r.bin')})")   # the journal's own words
    for said, line in [*LINES.items(), (KEPT, KEPT)]:
        assert interval_note(said, 1, 2, 3, "ck.bin") == line
        c = subprocess.run([str(tool), "interval-note", said, "1", "2", "3", "ck.bin"], capture_output=True, text=True)
        assert (c.returncode, c.stdout) == (0, line + "\n"), c.stderr
