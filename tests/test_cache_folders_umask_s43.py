"""The cache folders bobc makes are writable by their owner whatever the umask (probe s43 cacherace
finding 3).

Under a umask such as 277, mkdir's 0777 less it is 0500: the cache folder and its kinds' folders
that bobc made were then read-only to their own owner, so no entry could ever be written there and
every `bobc build` said `compiling the C runtime (the cache folder DIR cannot be written: every
build compiles it)` -- the cache bobc made itself, useless for good (seen as a non-root user in a
user namespace, `unshare -U --map-user=1000`).  bobc's temporary folders were already 0700 whatever
the umask (docs/cache.md); the cache's folders now get the owner's rwx the same way, the rest of
the mode as the umask leaves it.  Expected modes: 0777 less the umask, with 0700 added (mkdir(2)
and umask(2)), computed here by hand, never read from bobc."""
from __future__ import annotations

import os
import stat

import pytest

from bobc import cache

@pytest.mark.parametrize("mask, expected", [(0o277, 0o700), (0o027, 0o750), (0o022, 0o755)])
def test_folders_made_for_an_entry_keep_the_owners_rwx(tmp_path, monkeypatch, mask, expected):
    root = tmp_path / "new" / "cache"
    monkeypatch.setenv("BOBC_CACHE_DIR", str(root))
    old = os.umask(mask)
    try:
        cache.write("kernels", "0" * 64, b"data")
        scratch = cache.scratch_folder("objects")
    finally:
        os.umask(old)
    for folder in (tmp_path / "new", root, root / "kernels", root / "objects"):
        assert stat.S_IMODE(folder.stat().st_mode) == expected, folder
    assert cache.read("kernels", "0" * 64) == b"data"
    cache.release_scratch(scratch, remove=True)

def test_a_folder_that_was_there_keeps_its_mode(tmp_path, monkeypatch):
    root = tmp_path / "cache"
    root.mkdir()
    root.chmod(0o750)
    monkeypatch.setenv("BOBC_CACHE_DIR", str(root))
    old = os.umask(0o277)
    try:
        cache.write("kernels", "1" * 64, b"data")
    finally:
        os.umask(old)
    assert stat.S_IMODE(root.stat().st_mode) == 0o750
    assert stat.S_IMODE((root / "kernels").stat().st_mode) == 0o700
