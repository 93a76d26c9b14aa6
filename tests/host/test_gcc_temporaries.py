"""gcc's own temporaries go in bobc's process folder (session 30 review, leftovers finding 2).
Before, gcc ran with bobc's environment as it was, so its cc*.s, cc*.o and cc*.res went to /tmp
(or the user's TMPDIR) and a build killed mid-compile left them there, outside what bobc sweeps.
Now every gcc bobc runs has TMPDIR naming the command's `bobc-proc-*` folder (cache.
process_temporaries), which the next bobc command removes when a kill left it.  TMPDIR is no part
of the runtime objects' cache key: two commands, each with its own folder, share one entry."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from bobc import cache
from bobc.host import gcc

pytestmark = pytest.mark.skipif(shutil.which("gcc") is None, reason="needs gcc")

REPO = Path(__file__).resolve().parents[2]


def _library(tmp_path: Path) -> tuple[list[Path], list[Path]]:
    own = tmp_path / "runtime"
    own.mkdir()
    (own / "util.h").write_text("int util(void);\n")
    for name in ("a", "b"):
        (own / f"{name}.c").write_text(f'#include <string.h>\n#include "util.h"\n'
                                       f'int {name}(void) {{ return (int)strlen("{name}"); }}\n')
    return [own / "a.c", own / "b.c"], [own]


def _fake_gcc(tmp_path: Path) -> tuple[Path, Path]:
    """A gcc on PATH that records its TMPDIR and arguments, then runs the real one."""
    real = shutil.which("gcc")
    folder = tmp_path / "bin"
    folder.mkdir()
    record = tmp_path / "gcc-calls"
    fake = folder / "gcc"
    fake.write_text(f'#!/bin/sh\nprintf "%s\\t%s\\n" "${{TMPDIR-unset}}" "$*" >> "{record}"\nexec "{real}" "$@"\n')
    fake.chmod(0o755)
    return folder, record


def _calls(record: Path) -> list[tuple[str, str]]:
    if not record.exists():
        return []
    return [tuple(line.split("\t", 1)) for line in record.read_text().splitlines()]


def test_gcc_runs_with_tmpdir_in_the_commands_process_folder(tmp_path, monkeypatch):
    library, include = _library(tmp_path)
    folder, record = _fake_gcc(tmp_path)
    monkeypatch.setenv("PATH", f"{folder}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setenv("BOBC_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("TMPDIR", raising=False)
    assert gcc.compiler() == str(folder / "gcc")
    with cache.process_temporaries() as held:
        assert held.folder is not None and held.folder.name.startswith(cache.PROCESS_PREFIX)
        objects, leftover = gcc.library_objects(gcc.compiler(), library, include)
        main = tmp_path / "main.c"
        main.write_text('int a(void);\nint b(void);\nint main(void) { return a() + b() - 2; }\n')
        gcc.build([main], include, tmp_path / "host", library=library)      # the link's gcc too
        if leftover is not None:
            cache.release_scratch(leftover, remove=True)
    calls = _calls(record)
    assert any(" -c " in f" {arguments} " for _, arguments in calls)      # the compiles
    assert any(" -M " in f" {arguments} " for _, arguments in calls)      # the header listing
    assert any(arguments.endswith("-static -lm") for _, arguments in calls)   # the link
    assert {tmpdir for tmpdir, _ in calls} == {str(held.folder)}, calls
    assert subprocess.run([str(tmp_path / "host")]).returncode == 0


SCRIPT = """
import sys
from pathlib import Path
from bobc import cache
from bobc.host import gcc
library = [Path(p) for p in sys.argv[1:3]]
include = [Path(sys.argv[3])]
with cache.process_temporaries() as held:
    objects, leftover = gcc.library_objects(gcc.compiler(), library, include)
    print(gcc.library_key(gcc.compiler(), library, include))
    print(held.folder)
    if leftover is not None:
        cache.release_scratch(leftover, remove=True)
"""


def test_the_objects_key_is_the_same_in_two_commands(tmp_path):
    """Two processes, each with its own bobc-proc-* folder as gcc's TMPDIR: one key, and the
    second finds the first's objects (it runs no compile)."""
    library, include = _library(tmp_path)
    folder, record = _fake_gcc(tmp_path)
    env = {**os.environ, "PATH": f"{folder}{os.pathsep}{os.environ['PATH']}", "PYTHONPATH": str(REPO / "compiler"),
           "BOBC_CACHE_DIR": str(tmp_path / "cache"), "TMPDIR": str(tmp_path)}

    def command() -> tuple[str, str, list]:
        before = len(_calls(record))
        done = subprocess.run([sys.executable, "-c", SCRIPT, *map(str, library), str(include[0])], env=env,
                              capture_output=True, text=True)
        assert done.returncode == 0, done.stderr
        key, process_folder = done.stdout.splitlines()
        return key, process_folder, _calls(record)[before:]

    first_key, first_folder, first_calls = command()
    second_key, second_folder, second_calls = command()
    assert Path(first_folder).parent == tmp_path and Path(first_folder).name.startswith(cache.PROCESS_PREFIX)
    assert first_folder != second_folder
    assert any(" -c " in f" {arguments} " for _, arguments in first_calls)
    assert {tmpdir for tmpdir, _ in first_calls} == {first_folder}
    assert first_key == second_key
    assert not any(" -c " in f" {arguments} " for _, arguments in second_calls)   # a hit
    assert {tmpdir for tmpdir, _ in second_calls} <= {second_folder}
    assert not Path(first_folder).exists() and not Path(second_folder).exists()   # each removed its own
