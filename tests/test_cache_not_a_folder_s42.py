"""A cache path that is no folder is said, once a command (probe s42 cli3, "Left"): with
`BOBC_CACHE_DIR` naming a regular file, `bobc check PLAN` ran without a cache and said nothing, so a
user who set it by mistake never learned why every check redid its work -- while `bobc cache` refuses
the same folder ("is not a folder: builds run without a cache", exit 1) and docs/cache.md says an
unusable cache only loses the saving.  Expected (docs/cache.md): the command's result and exit code
as with the cache off, and exactly one stderr line naming the folder, the variable that named it and
what to do, in `bobc cache`'s words; nothing when the folder is a folder."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPOSITORY = Path(__file__).resolve().parents[1]
FIX = "point BOBC_CACHE_DIR at a folder (or unset it for ~/.cache/bobc)"


@pytest.fixture
def work(tmp_path):
    shutil.copytree(REPOSITORY / "tests/native/plans", tmp_path / "plans")
    (tmp_path / "file").write_text("not a cache")
    return tmp_path


def check(work, **environment):
    # no --entry: `bobc check --entry requestHost` evaluates the native artifact as a build does
    # (probe s44 checkreq), which compiles the C runtime and says so on stderr
    env = {key: value for key, value in os.environ.items() if key not in ("BOBC_CACHE_DIR", "XDG_CACHE_HOME")}
    return subprocess.run([sys.executable, "-m", "bobc", "check", "Native/Request.bob"],
                          cwd=work / "plans", capture_output=True, text=True, timeout=300,
                          env={**env, "PYTHONPATH": str(REPOSITORY / "compiler"), **environment})


@pytest.mark.parametrize("value, said", [
    ("../file", "../file (BOBC_CACHE_DIR) is not a folder"),
    ("../file/sub", "../file/sub (BOBC_CACHE_DIR) cannot be made (a part of its path is a file, not a folder)"),
    ("/dev/null", "/dev/null (BOBC_CACHE_DIR) is not a folder"),
], ids=["regular-file", "path-through-a-file", "device"])
def test_a_cache_that_is_no_folder_is_said_once(work, value, said):
    off = check(work, BOBC_CACHE_DIR="off")
    assert off.returncode == 0 and off.stderr == "", off.stderr
    done = check(work, BOBC_CACHE_DIR=value)
    assert (done.returncode, done.stdout) == (0, off.stdout)
    assert done.stderr == (f"bobc: warning: the cache folder {said}: this command runs without a cache (the same "
                           f"work and output, done again next time); {FIX}\n"), done.stderr
    assert (work / "file").read_text() == "not a cache"


def test_the_xdg_folder_is_named_as_such(work):
    (work / "xdg").mkdir()
    (work / "xdg" / "bobc").write_text("not a cache")
    done = check(work, XDG_CACHE_HOME=str(work / "xdg"))
    assert done.returncode == 0, done.stderr
    assert done.stderr.startswith(f"bobc: warning: the cache folder {work / 'xdg' / 'bobc'} (XDG_CACHE_HOME/bobc) "
                                  "is not a folder: this command runs without a cache"), done.stderr
    assert done.stderr.count("\n") == 1 and "point BOBC_CACHE_DIR at a folder" in done.stderr


def test_a_cache_folder_says_nothing(work):
    done = check(work, BOBC_CACHE_DIR=str(work / "cache"))
    assert (done.returncode, done.stderr) == (0, "")
    again = check(work, BOBC_CACHE_DIR=str(work / "cache"))
    assert (again.returncode, again.stderr, again.stdout) == (0, "", done.stdout)
