"""Probe s47 faultinject: a failure injected at every I/O call of a publication (and of the
recovery of a kept journal), the host's (runtime_c/host_io.c, through runtime_c/tests/rt_tool)
and the reference runner's (bobc.reference.safe_io) alike; io_fault_shim.c makes the named
call fail on the named file.

Finding 1: the journal's removal after every rename was unchecked on the host (exit 0,
nothing said, the journal left: the next invocation said it "completed an interrupted
publication" that was complete, or refused the outputs as "stale" once one was replaced) and a
traceback on the reference side (exit 1, after every output was published).  Both now say one
warning naming the journal, the system's words and what to do; the status stays 0 (every
output was written).
Finding 2: a journal that could not be read (EIO; EACCES) was called "a damaged publication
journal"; it is now "cannot be read: REASON", left as it is, alike."""
from __future__ import annotations

import errno
import os
import sys
import time
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
from test_io_faults_s36 import (c_publish, contents, faulted, old_outputs, reference_publish,  # noqa: E402, F401
                                shim)
from test_safe_io_journal import put_journal, tool  # noqa: E402, F401 -- the rt_tool fixture

NEW = {"c": "new --checkpoint-out\n", "p": "new --predictions\n", "r": "new --result\n"}
# runtime_c/host_io.h RT_IO_JOURNAL_LEFT_WARNING, after the report's name: the journal as the
# publication names it (its folder as the outputs' paths give it), strerror(EIO)
LEFT = ("warning: the outputs were published, but their journal {} could not be removed: Input/output error; "
        "every file it lists is in place: remove the journal by hand\n")


def publish_both(tool, shim, tmp_path, op, name, setup=None):  # noqa: F811
    """Each side publishes "new" into its own folder of old outputs (after `setup(folder)`),
    `op` failing on the file `name` there (no name: on the folder): [(side, code, stderr, folder)]."""
    outcomes = []
    for side in ("c", "reference"):
        folder = tmp_path / side
        old_outputs(tool, folder)
        if setup:
            setup(folder)
        env = faulted(shim, op, f"{folder.resolve()}/{name}" if name else str(folder.resolve()))
        if side == "c":
            code, stderr = c_publish(tool, folder, "new", env)
        else:
            code, message, stderr = reference_publish(folder, "new", env)
            assert "Traceback" not in stderr, stderr
            if code:
                stderr = f"bobc: error: {message}\n"
        outcomes.append((side, code, stderr, folder))
    return outcomes


def test_a_journal_that_cannot_be_removed_after_the_renames_is_a_warning_alike(tool, shim, tmp_path):  # noqa: F811
    for side, code, stderr, folder in publish_both(tool, shim, tmp_path, "unlink", ".c.bob-journal"):
        name = "host" if side == "c" else "bobc"
        assert (code, stderr) == (0, f"{name}: " + LEFT.format("./.c.bob-journal")), side
        # every output is new; the journal is what the shim kept from being removed
        assert {k: v for k, v in contents(folder).items() if k != ".c.bob-journal"} == NEW, side
        assert ".c.bob-journal" in contents(folder), side
        # what the warning says to do: then the next invocation has nothing to complete
        (folder / ".c.bob-journal").unlink()
        assert c_publish(tool, folder, "new") == (0, "")


def kept_journal(folder: Path) -> None:
    """What a kill after a publication's first rename leaves: p new, r and c's temporaries, the
    journal (the old outputs 10 s old, the journal 5 s old: not stale)."""
    real = folder.resolve()
    (folder / "p").write_text("new --predictions\n")
    pairs = []
    for name, letter in (("p", "P"), ("r", "R"), ("c", "C")):
        temporary = f".{name}.tmp-Ab3dE{letter}"
        if name != "p":
            (folder / temporary).write_text(NEW[name])
        pairs.append((real / temporary, real / name))
    put_journal(folder / ".c.bob-journal", pairs)
    for name in ("p", "r", "c"):
        when = time.time_ns() - 10 * 10 ** 9
        os.utime(folder / name, ns=(when, when))
    when = time.time_ns() - 5 * 10 ** 9
    os.utime(folder / ".c.bob-journal", ns=(when, when))


def test_a_recovery_whose_journal_cannot_be_removed_warns_alike(tool, shim, tmp_path):  # noqa: F811
    for side, code, stderr, folder in publish_both(tool, shim, tmp_path, "unlink", ".c.bob-journal", kept_journal):
        name = "host" if side == "c" else "bobc"
        real = folder.resolve()
        completed = (f"{name}: completed an interrupted publication from ./.c.bob-journal: "
                     f"{real}/p {real}/r {real}/c\n")
        # the recovery's journal is left (the warning), then this invocation's own publication's
        # journal is left too: the same warning twice, both naming the journal
        assert (code, stderr) == (0, completed + f"{name}: " + LEFT.format("./.c.bob-journal") +
                                  f"{name}: " + LEFT.format("./.c.bob-journal")), side
        assert {k: v for k, v in contents(folder).items() if k != ".c.bob-journal"} == NEW, side


def test_a_journal_that_cannot_be_read_is_not_called_damaged_alike(tool, shim, tmp_path):  # noqa: F811
    said = {}
    for side, code, stderr, folder in publish_both(tool, shim, tmp_path, "open", ".c.bob-journal", kept_journal):
        said[side] = (code, stderr.split(": error: ", 1)[-1])
        # left as it is: the journal, its temporaries, the one output renamed before the kill
        assert sorted(contents(folder)) == [".c.bob-journal", ".c.tmp-Ab3dEC", ".r.tmp-Ab3dER", "c", "p", "r"], side
        assert contents(folder)["r"] == "old --result\n" and contents(folder)["c"] == "old --checkpoint-out\n"
        # once it can be read, the next invocation completes it
        assert c_publish(tool, folder, "new")[0] == 0 and contents(folder) == NEW, side
    assert said["c"] == said["reference"] == (
        8, "journal ./.c.bob-journal: cannot be read: Input/output error; it was left as it is; see docs/runtime.md "
           "(Files) to finish or remove it\n")


def test_a_trial_file_that_cannot_be_removed_refuses_the_output_alike(tool, shim, tmp_path):  # noqa: F811
    """Finding 3: the folder's trial file (.bobc-trial-XXXXXX, made and removed when an output is
    checked, before any work) made but not removable was left unsaid by the host, and called
    "a file cannot be created" by the reference; both now refuse the output by what happened."""
    said = {}
    for side, code, stderr, folder in publish_both(tool, shim, tmp_path, "unlink", ".bobc-trial-*"):
        said[side] = (code, stderr.split(": error: ", 1)[-1])
        trials = [name for name in contents(folder) if name.startswith(".bobc-trial-")]
        assert len(trials) == 1, side              # the one the shim kept, the one the message names
        assert {k: v for k, v in contents(folder).items() if k not in trials} == {
            "c": "old --checkpoint-out\n", "p": "old --predictions\n", "r": "old --result\n"}, side
    assert said["c"] == said["reference"] == (
        8, "output p (--predictions): a trial file made in its folder . cannot be removed: Input/output error; remove "
           "the .bobc-trial-* file there by hand; nothing was written\n")


# Finding 4: a full file system (ENOSPC) or a used-up quota (EDQUOT) at a publication's
# temporary said the system's words alone; it now also says what to do, as a file size limit
# (EFBIG) and a full descriptor table (EMFILE) do.  The folder is the outputs' (".").
ROOM = {"ENOSPC": "No space left on device (the file system of . is full: free space there, then run again)",
        "EDQUOT": "Disk quota exceeded (the disk quota on the file system of . is used up: free space there or have "
                  "the quota raised, then run again)"}


@pytest.mark.parametrize("number", sorted(ROOM))
def test_a_full_file_system_at_a_temporary_says_what_to_do_alike(tool, shim, tmp_path, number):  # noqa: F811
    said = {}
    for side in ("c", "reference"):
        folder = tmp_path / side
        before = old_outputs(tool, folder)
        env = {**faulted(shim, "fsync", f"{folder.resolve()}/.r.tmp-*"), "IO_FAULT_ERRNO": str(getattr(errno, number))}
        if side == "c":
            code, stderr = c_publish(tool, folder, "new", env)
            said[side] = (code, stderr.split("host: error: ", 1)[-1].rstrip("\n"))
        else:
            code, message, stderr = reference_publish(folder, "new", env)
            assert "Traceback" not in stderr, stderr
            said[side] = (code, message)
        assert contents(folder) == before, side       # nothing published, no temporary left
    assert said["c"] == said["reference"] == (
        8, f"output r: fsync of the temporary file failed: {ROOM[number]} (nothing was published)")


def test_a_temporary_that_cannot_be_created_for_want_of_room_says_what_to_do_alike(tool, shim, tmp_path):  # noqa: F811
    """No inode left (ENOSPC at the temporary's creation)."""
    said = {}
    for side in ("c", "reference"):
        folder = tmp_path / side
        before = old_outputs(tool, folder)
        env = {**faulted(shim, "open", f"{folder.resolve()}/.p.tmp-*"), "IO_FAULT_ERRNO": str(errno.ENOSPC)}
        if side == "c":
            code, stderr = c_publish(tool, folder, "new", env)
            said[side] = (code, stderr.split("host: error: ", 1)[-1].rstrip("\n"))
        else:
            code, message, stderr = reference_publish(folder, "new", env)
            assert "Traceback" not in stderr, stderr
            said[side] = (code, message)
        assert contents(folder) == before, side
    assert said["c"] == said["reference"] == (
        8, f"output p: cannot create a temporary file in .: {ROOM['ENOSPC']} (nothing was published)")


UNSYNCED = ("warning: the outputs were published, but fsync of their folder {} failed: Input/output error; they are "
            "in place, but may not survive a crash or power loss: check the disk (dmesg)\n")


def test_a_recovery_whose_folder_fsync_fails_warns_as_a_publication_does_alike(tool, shim, tmp_path):  # noqa: F811
    """Finding 5: the recovery's fsync of the folders it renamed into was unchecked (a
    publication's says a warning since s36): every fsync of the folder fails (EIO); the recovery
    now warns as the publication after it does, the status 0, the journal removed."""
    for side, code, stderr, folder in publish_both(tool, shim, tmp_path, "fsync", "", kept_journal):
        name = "host" if side == "c" else "bobc"
        real = folder.resolve()
        completed = (f"{name}: completed an interrupted publication from ./.c.bob-journal: "
                     f"{real}/p {real}/r {real}/c\n")
        # the recovery's folder, as its journal names it (real); the publication's, as its outputs give it
        assert (code, stderr) == (0, completed + f"{name}: " + UNSYNCED.format(real) +
                                  f"{name}: " + UNSYNCED.format(".")), side
        assert contents(folder) == NEW, side
