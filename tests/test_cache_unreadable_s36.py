"""`bobc cache` on a cache it cannot read (probe s36 exitcodes2 finding 1).  Before, a cache folder
that cannot be listed was reported as "0 B in bobc's 0 entries", exit 0, and a kind's folder that
cannot be listed vanished from the report, while `bobc cache --prune` on the same folders says it
cannot read them.  README: a file that is there but unreadable is exit 1, with a message naming it.
The refusal is the system's (EACCES from listing the folder: an ordinary user's view of another
user's cache, made here by refusing os.scandir of that folder, as tests/test_resources_s33.py
refuses os.unlink, since a test run as root reads any folder)."""
from __future__ import annotations

import errno
import os

from bobc import cache
from bobc.cli import main


def _refuse_listing(monkeypatch, folder):
    scandir = os.scandir

    def refused(path=".", *args, **options):
        if not isinstance(path, int) and os.fspath(path) == os.fspath(folder):
            raise PermissionError(errno.EACCES, os.strerror(errno.EACCES), os.fspath(path))
        return scandir(path, *args, **options)

    monkeypatch.setattr(os, "scandir", refused)


def test_a_cache_folder_that_cannot_be_read_is_not_called_empty(tmp_path, monkeypatch, capsys):
    root = tmp_path / "cache"
    monkeypatch.setenv("BOBC_CACHE_DIR", str(root))
    cache.write("kernels", "%064x" % 1, b"k" * 10)
    _refuse_listing(monkeypatch, root)
    assert main(["cache"]) == 1
    said = capsys.readouterr()
    assert "0 entries" not in said.out and "0 B" not in said.out
    assert f"cannot read the cache folder {root} (Permission denied)" in said.err
    assert "hint: run it as the user who owns the cache folder" in said.err


def test_a_kind_folder_that_cannot_be_read_is_named_and_the_exit_is_not_0(tmp_path, monkeypatch, capsys):
    root = tmp_path / "cache"
    monkeypatch.setenv("BOBC_CACHE_DIR", str(root))
    cache.write("kernels", "%064x" % 1, b"k" * 10)
    cache.write("parsed", "%064x" % 2, b"p" * 10)
    _refuse_listing(monkeypatch, root / "kernels")
    assert main(["cache"]) == 1
    said = capsys.readouterr()
    # what could be counted is still shown: the readable kind, with its one entry
    assert "in bobc's 1 entry" in said.out and "parsed" in said.out
    assert f"cannot read 1 of bobc's folders in {root}: kernels/ (Permission denied)" in said.err
    # prune, on the same cache, says the same folder cannot be read, with the same exit: README's 1
    # (a file that is there but unreadable), not 8 (an output not written) -- probe s37 leftovers 3
    assert main(["cache", "--prune", "1"]) == 1
    said = capsys.readouterr().err
    assert f"cannot read 1 of bobc's folders in {root}: kernels/ (Permission denied)" in said
    assert "could not remove" not in said          # no entry of it was judged: none is counted as kept


def test_prune_of_a_cache_folder_that_cannot_be_read_is_exit_1(tmp_path, monkeypatch, capsys):
    root = tmp_path / "cache"
    monkeypatch.setenv("BOBC_CACHE_DIR", str(root))
    cache.write("kernels", "%064x" % 1, b"k" * 10)
    _refuse_listing(monkeypatch, root)
    assert main(["cache"]) == 1
    capsys.readouterr()
    assert main(["cache", "--prune", "1"]) == 1      # as `bobc cache` of the same folder
    said = capsys.readouterr().err
    assert f"cannot prune the cache folder {root}: it cannot be read (Permission denied)" in said
