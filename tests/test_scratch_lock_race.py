"""A scratch folder's lock is never seen unheld by another command's sweep (probe s32 concur
finding 1): parallel builds sharing a TMPDIR removed each other's bobc-proc-* folder about once in
forty, because the lock file was made as `.lock` and locked only after, and a sweep in between took
the lock and removed the live folder (exit 8, "cannot make a temporary folder ... No such file").
Here the sweep runs in exactly that gap: inside the creator's call to take the lock."""
from __future__ import annotations

import tempfile
from pathlib import Path

from bobc import cache


def test_a_sweep_while_the_lock_is_being_taken_leaves_the_folder(tmp_path, monkeypatch):
    folder = Path(tempfile.mkdtemp(prefix=cache.PROCESS_PREFIX, dir=tmp_path))
    taken = cache._lock
    swept = []

    def sweep_then_lock(handle, wait=True):
        swept.append(cache.sweep_leftover(str(folder)))        # another command's sweep, now
        return taken(handle, wait)

    monkeypatch.setattr(cache, "_lock", sweep_then_lock)
    try:
        assert cache._locked(folder) == folder
        assert swept == [False], "the sweep removed a folder whose command was taking its lock"
        assert folder.is_dir() and (folder / cache.LOCK_NAME).is_file()
        assert not (folder / (cache.LOCK_NAME + ".pending")).exists()
        monkeypatch.setattr(cache, "_lock", taken)
        assert cache.sweep_leftover(str(folder)) is False        # held: a later sweep leaves it too
    finally:
        cache.release_scratch(folder, remove=True)
    assert not folder.exists()


def test_a_folder_whose_command_is_gone_is_still_swept(tmp_path):
    folder = Path(tempfile.mkdtemp(prefix=cache.PROCESS_PREFIX, dir=tmp_path))
    cache._locked(folder)
    cache.release_scratch(folder)                                # the command ended without removing it
    assert cache.sweep_leftover(str(folder)) is True and not folder.exists()
