"""Probe s28 publish2 (notes/s28/probe-publish2.md), the recovery side, held the same in
runtime_c/host_io.c (rt_tool) and bobc.reference.safe_io (docs/runtime.md, "Files"):

  2. a folder that cannot be listed (mode 0300: search and write, no read) is searched by name
     for the journal a publication of the invocation's outputs leaves (`.NAME.bob-journal`
     beside its last destination): completed, not silently left behind;
  5. the notice of a completed publication shows its paths as every message does (a control
     character as '?', a long path shortened): one line, the same on both sides.
"""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import reachable_folder

sys.path.insert(0, str(Path(__file__).resolve().parent))
from test_safe_io_journal import NOBODY, both, interrupted, tool  # noqa: E402, F401 -- tool: the rt_tool fixture
from test_journal_notice import _c_notice, _reference_notice  # noqa: E402

from bobc.reference import safe_io  # noqa: E402


def _unlistable_base():
    base = reachable_folder("bobc-0300-")     # a folder the other user reaches
    base.chmod(0o755)
    return base


def _write_only(folder: Path) -> None:
    """`folder` as the other user's, mode 0300: they may search and write it, not list it."""
    os.chown(folder, NOBODY, NOBODY)
    folder.chmod(0o300)


def test_a_journal_in_a_folder_that_cannot_be_listed_is_completed_alike(tool):  # noqa: F811
    """Finding 2: before, opendir/listdir failed and the journal was skipped: the run went on
    from the old checkpoint, the mixed set left as it was.  Now it is found by name."""
    base = _unlistable_base()
    try:
        def setup(folder):
            inner = folder / "d"
            inner.mkdir()
            names = interrupted(inner)
            _write_only(inner)
            return [f"d/{name}" for name in names]
        code, message, files = both(tool, base, setup, as_user=NOBODY)
        assert code == 0, message
        assert (files["d/p.bin"], files["d/r.bin"], files["d/c.bin"]) == (b"OLD", b"NEW", b"NEW")
        assert "d/.c.bin.bob-journal" not in files
    finally:
        shutil.rmtree(base, ignore_errors=True)


def test_a_stale_journal_in_a_folder_that_cannot_be_listed_is_refused_alike(tool):  # noqa: F811
    """Found by name, it is judged as any journal: one older than a destination is refused."""
    base = _unlistable_base()
    try:
        def setup(folder):
            inner = folder / "d"
            inner.mkdir()
            names = interrupted(inner)
            (inner / "r.bin").write_bytes(b"NEWER")
            _write_only(inner)
            return [f"d/{name}" for name in names]
        code, message, files = both(tool, base, setup, as_user=NOBODY)
        assert code == 8 and "stale: <F>/d/r.bin was replaced after the journal was written" in message, message
        assert files["d/r.bin"] == b"NEWER" and "d/.c.bin.bob-journal" in files
    finally:
        shutil.rmtree(base, ignore_errors=True)


def test_only_the_outputs_own_journal_names_are_found_in_a_folder_that_cannot_be_listed(tool):  # noqa: F811
    """The documented limit: a journal named after a file this invocation does not name (here
    c.bin, the invocation's checkpoint being other.bin) is found by listing only."""
    base = _unlistable_base()
    try:
        def setup(folder):
            inner = folder / "d"
            inner.mkdir()
            interrupted(inner)
            _write_only(inner)
            return ["d/p.bin", "d/r.bin", "d/other.bin"]
        code, message, files = both(tool, base, setup, as_user=NOBODY)
        assert code == 0, message
        assert files["d/r.bin"] == b"OLD" and "d/.c.bin.bob-journal" in files
    finally:
        shutil.rmtree(base, ignore_errors=True)


@pytest.mark.parametrize("folder_name", ["new\nline", "e" * 200 + "/" + "f" * 100])
def test_the_notice_shows_its_paths_as_every_message_does(tool, tmp_path, folder_name):  # noqa: F811
    """Finding 5: before, the notice printed the journal's and the destinations' paths raw, so a
    newline split it and a long path was not shortened."""
    notices = {}
    for side in ("c", "r"):
        folder = tmp_path / side
        inner = folder / folder_name
        inner.mkdir(parents=True)
        paths = [f"{folder_name}/{name}" for name in interrupted(inner)]
        notices[side] = (_c_notice(tool, folder, paths) if side == "c" else _reference_notice(folder, paths))
        assert not (inner / ".c.bin.bob-journal").exists()
        real = str(folder.resolve())
        journal = f"{folder_name}/.c.bin.bob-journal"
        expected = (f"completed an interrupted publication from {safe_io.shown(journal)}: "
                    + " ".join(safe_io.shown(f"{real}/{folder_name}/{name}") for name in ("p.bin", "r.bin", "c.bin")))
        assert notices[side] == expected
        notices[side] = notices[side].replace(real, "<F>")
    assert notices["r"] == notices["c"]
