"""bobc's user cache with other processes and over time (probe s30 cache findings 2, 3, 4, 7, 8):
a sweep removes a temporary only when no live process holds its lock, whatever its age; the
runtime objects' key holds gcc's environment and the system headers the sources include;
`bobc cache --prune DAYS` removes only entries no build used for DAYS days; a killed command's
temporaries outside the cache are swept by the next; an empty BOBC_CACHE_DIR is unset."""
from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

from bobc import cache
from bobc.cli import main

REPO = Path(__file__).resolve().parents[1]
needs_gcc = pytest.mark.skipif(shutil.which("gcc") is None, reason="needs gcc")

# a process that makes a scratch folder (or its per-command temporary folder), says where, and
# holds it until its stdin closes
HOLDER = """
import os, sys, tempfile
from pathlib import Path
from bobc import cache
if sys.argv[1] == "scratch":
    folder = cache.scratch_folder("runtime-objects")
    print(folder, flush=True)
    sys.stdin.read()
else:
    with cache.process_temporaries():
        print(tempfile.gettempdir(), flush=True)
        sys.stdin.read()
"""


def _holder(what: str, env: dict) -> tuple[subprocess.Popen, Path]:
    child = subprocess.Popen([sys.executable, "-c", HOLDER, what], stdin=subprocess.PIPE,
                             stdout=subprocess.PIPE, text=True,
                             env={**os.environ, "PYTHONPATH": str(REPO / "compiler"), **env})
    return child, Path(child.stdout.readline().strip())


def _sweep(root: Path) -> None:
    cache._SWEPT.discard(str(root))
    cache._sweep(root)


def _age(path: Path, seconds: float) -> None:
    when = time.time() - seconds
    os.utime(path, (when, when))


def test_a_live_builds_scratch_folder_is_never_swept_whatever_its_age(tmp_path):
    child, scratch = _holder("scratch", {"BOBC_CACHE_DIR": str(tmp_path)})
    try:
        assert scratch.parent == tmp_path / "runtime-objects" and scratch.is_dir()
        (scratch / "nv_status.o").write_bytes(b"half made")
        for seconds in (2 * 3600, -100 * 86400):       # suspended for hours; a clock behind ours
            _age(scratch, seconds)
            _sweep(tmp_path)
            assert (scratch / "nv_status.o").read_bytes() == b"half made"
    finally:
        child.stdin.close()
        child.wait()
    _sweep(tmp_path)                                   # its builder is gone: a leftover now
    assert not scratch.exists()


def test_a_leftover_is_swept_whatever_its_date(tmp_path):
    kind = tmp_path / "kernels"
    kind.mkdir()
    locked_future, lockless_future, lockless_recent, leftover_file = (
        kind / ".tmp-a", kind / ".tmp-b", kind / ".tmp-c", kind / ".tmp-d")
    for folder in (locked_future, lockless_future, lockless_recent):
        folder.mkdir()
    (locked_future / cache.LOCK_NAME).touch()
    leftover_file.write_bytes(b"x")
    for path in (locked_future, lockless_future, leftover_file):
        _age(path, -365 * 86400)                       # dated a year ahead (another machine's clock)
    _sweep(tmp_path)
    assert not locked_future.exists() and not lockless_future.exists() and not leftover_file.exists()
    assert lockless_recent.exists()      # no lock yet and seconds old: maybe being made right now


def test_a_killed_commands_temporaries_are_swept_by_the_next(tmp_path, monkeypatch):
    live, live_folder = _holder("temporaries", {"TMPDIR": str(tmp_path)})
    killed, killed_folder = _holder("temporaries", {"TMPDIR": str(tmp_path)})
    try:
        assert killed_folder.parent == tmp_path and killed_folder.name.startswith(cache.PROCESS_PREFIX)
        (killed_folder / "bobc-build-x").mkdir()
        killed.send_signal(signal.SIGKILL)
        killed.wait()
        monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
        with cache.process_temporaries():
            assert tempfile.gettempdir() != str(tmp_path)
        assert not killed_folder.exists()
        assert live_folder.is_dir()                    # a live command's are left alone
    finally:
        live.stdin.close()
        live.wait()
    assert not live_folder.exists()                    # it removed its own at its end


def _library(tmp_path: Path) -> tuple[list[Path], list[Path]]:
    own = tmp_path / "runtime"
    own.mkdir()
    (own / "util.h").write_text("int util(void);\n")
    source = own / "util.c"
    source.write_text('#include <string.h>\n#include "util.h"\nint util(void) { return (int)strlen("ab"); }\n')
    return [source], [own]


@needs_gcc
def test_the_objects_key_holds_gccs_environment_and_the_headers_used(tmp_path, monkeypatch):
    from bobc.host import gcc

    monkeypatch.setenv("BOBC_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("CPATH", raising=False)
    library, include = _library(tmp_path)
    compiler = gcc.compiler()
    plain = gcc.library_key(compiler, library, include)
    assert gcc.library_key(compiler, library, include) == plain          # a warm build: the same key
    shadow = tmp_path / "inc"                                            # the probe's shadowing <string.h>
    shadow.mkdir()
    (shadow / "string.h").write_text('#include_next <string.h>\n__asm__(".section .comment\\n.string \\"shadowed\\"\\n.previous");\n')
    monkeypatch.setenv("CPATH", str(shadow))
    shadowed = gcc.library_key(compiler, library, include)
    assert shadowed != plain
    assert any(line.startswith(str((shadow / "string.h").resolve()) + " ")
               for line in cache.load(gcc.HEADERS_KIND, gcc.cache.digest(*_own_parts(gcc, compiler, library, include)), tuple))
    (shadow / "string.h").write_text('#include_next <string.h>\n/* changed */\n')   # a header upgraded
    assert gcc.library_key(compiler, library, include) not in (plain, shadowed)
    monkeypatch.delenv("CPATH")
    monkeypatch.setenv("GCC_EXEC_PREFIX", str(tmp_path / "elsewhere/"))
    assert gcc.library_key(compiler, library, include) != plain


def _own_parts(gcc, compiler, library, include):
    parts = [gcc.compiler_identity(compiler), " ".join(gcc.CFLAGS)]
    for source in library:
        parts += [source.name, source.read_bytes()]
    for folder in include:
        for header in sorted(folder.glob("*.h")):
            parts += [header.name, header.read_bytes()]
    return parts


@needs_gcc
def test_a_shadowing_cpath_header_is_in_the_warm_objects(tmp_path, monkeypatch):
    from bobc.host import gcc

    monkeypatch.setenv("BOBC_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("CPATH", raising=False)
    library, include = _library(tmp_path)
    compiler = gcc.compiler()
    gcc.library_objects(compiler, library, include)                      # cached without CPATH
    shadow = tmp_path / "inc"
    shadow.mkdir()
    (shadow / "string.h").write_text('#include_next <string.h>\n__asm__(".section .comment\\n.string \\"shadowed\\"\\n.previous");\n')
    monkeypatch.setenv("CPATH", str(shadow))
    objects, leftover = gcc.library_objects(compiler, library, include)
    assert b"shadowed" in objects[0].read_bytes()
    if leftover is not None:
        cache.release_scratch(leftover, remove=True)


def test_prune_removes_only_entries_not_used_lately(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("BOBC_CACHE_DIR", str(tmp_path))
    used, unused, new, folder = ("%064x" % n for n in (1, 2, 3, 4))        # keys are SHA-256 digests
    for key in (used, unused, new):
        cache.write("kernels", key, key.encode())
    scratch = cache.scratch_folder("objects")
    (scratch / "a.o").write_bytes(b"o")
    cache.publish_folder("objects", folder, scratch, ["a.o"])
    for entry in (tmp_path / "kernels" / used, tmp_path / "kernels" / unused, tmp_path / "objects" / folder):
        _age(entry, 40 * 86400)
    assert cache.read("kernels", used) == used.encode()                  # a hit marks it used
    assert main(["cache"]) == 0
    shown = capsys.readouterr().out
    assert "kernels" in shown and "3 entries" in shown and "objects" in shown
    assert main(["cache", "--prune", "30"]) == 0
    assert "removed 2 entries not used for 30 days" in capsys.readouterr().out
    assert sorted(os.listdir(tmp_path / "kernels")) == sorted([new, used])
    assert os.listdir(tmp_path / "objects") == []
    for days in ("-1", "0", "0.5", "inf", "nan", "abc"):
        # younger than a day could take what a running build marked used within the hour
        assert main(["cache", "--prune", days]) == 2
        assert f"--prune {days}: give a number of days of at least 1" in capsys.readouterr().err


def test_prune_leaves_what_bobc_did_not_store(tmp_path, monkeypatch, capsys):
    """BOBC_CACHE_DIR pointed at a user's folder by mistake: an old file there is not an entry
    (a folder of bobc's kinds, named by a 64-digit key) and stays (probe s30 today finding 2:
    --prune removed a user's thesis.tex)."""
    monkeypatch.setenv("BOBC_CACHE_DIR", str(tmp_path))
    (tmp_path / "Documents").mkdir()
    thesis = tmp_path / "Documents" / "thesis.tex"
    thesis.write_text("important")
    (tmp_path / "kernels").mkdir()
    notes = tmp_path / "kernels" / "notes.txt"
    notes.write_text("mine")
    old = "%064x" % 7
    (tmp_path / "kernels" / old).write_bytes(b"entry")
    for path in (thesis, notes, tmp_path / "kernels" / old):
        _age(path, 400 * 86400)
    assert main(["cache", "--prune", "30"]) == 0
    assert "removed 1 entry not used for 30 days" in capsys.readouterr().out
    assert thesis.read_text() == "important" and notes.read_text() == "mine"
    assert not (tmp_path / "kernels" / old).exists()


def test_cache_says_a_missing_cache_and_refuses_a_file(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("BOBC_CACHE_DIR", str(tmp_path / "none"))
    assert main(["cache"]) == 0 and "no cache yet" in capsys.readouterr().out
    assert main(["cache", "--prune", "30"]) == 0 and "no cache yet" in capsys.readouterr().out
    (tmp_path / "file").write_text("x")
    monkeypatch.setenv("BOBC_CACHE_DIR", str(tmp_path / "file"))
    assert main(["cache"]) == 1
    assert "is not a folder: builds run without a cache" in capsys.readouterr().err


def test_cache_refuses_a_folder_under_a_file(tmp_path, monkeypatch, capsys):
    """A cache folder under a file (BOBC_CACHE_DIR=file/sub) can never be made, and builds say
    they cannot write it: `bobc cache` says so, exit 1, not "no cache yet", exit 0 (probe s34
    cache34 finding 4)."""
    (tmp_path / "file").write_text("x")
    monkeypatch.setenv("BOBC_CACHE_DIR", str(tmp_path / "file" / "sub"))
    for argv in (["cache"], ["cache", "--prune", "30"]):
        assert main(argv) == 1
        captured = capsys.readouterr()
        assert "no cache yet" not in captured.out
        assert "file/sub cannot be made (a part of its path is a file, not a folder)" in captured.err
    assert (tmp_path / "file").read_text() == "x"


def test_a_published_folder_keeps_no_lock_file(tmp_path, monkeypatch):
    monkeypatch.setenv("BOBC_CACHE_DIR", str(tmp_path))
    scratch = cache.scratch_folder("objects")
    (scratch / "a.o").write_bytes(b"o")
    published = cache.publish_folder("objects", "k", scratch, ["a.o"])
    assert sorted(os.listdir(published)) == [cache.ENTRY_LISTING, "a.o"]
    assert cache.cached_folder("objects", "k", ["a.o"]) == published


def test_an_empty_bobc_cache_dir_is_unset(monkeypatch, tmp_path):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    monkeypatch.setenv("BOBC_CACHE_DIR", "")
    assert cache.folder() == tmp_path / "bobc"
    assert "set and not empty" in (REPO / "docs/cache.md").read_text()
