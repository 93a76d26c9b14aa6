"""gcc stopped by the system, not by the source: a full disk, the file size limit, no memory, a
signal.  Said as what ran out and what to do, exit 8, never "this is a bobc bug" (probe s31
signals finding 3: every gcc failure had that hint and exit 1).  A cache folder with no room
loses the saving, not the build: the objects are compiled in the command's temporary folder
instead, stored nowhere, and one warning line says so (docs/cache.md).

A fake gcc on PATH prints what gcc, as, ld and collect2 print in those cases and exits 1, or
kills itself with a signal (as tests/host/test_gcc_temporaries.py puts its fake on PATH)."""
from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest

from bobc import cache
from bobc.host import gcc

pytestmark = pytest.mark.skipif(shutil.which("gcc") is None, reason="needs gcc")

REAL_GCC = shutil.which("gcc")


def _fake_gcc(tmp_path: Path, monkeypatch, body: str) -> None:
    monkeypatch.setattr(tempfile, "tempdir", None)      # TMPDIR as the test set it
    folder = tmp_path / "bin"
    folder.mkdir()
    fake = folder / "gcc"
    fake.write_text(f"#!/bin/sh\n{body}\n")
    fake.chmod(0o755)
    monkeypatch.setenv("PATH", f"{folder}{os.pathsep}{os.environ['PATH']}")
    assert gcc.compiler() == str(fake)


def _source(tmp_path: Path) -> tuple[Path, list[Path]]:
    include = tmp_path / "include"
    include.mkdir()
    main = tmp_path / "main.c"
    main.write_text("int main(void) { return 0; }\n")
    return main, [include]


def _build(tmp_path: Path):
    main, include = _source(tmp_path)
    with cache.process_temporaries():
        gcc.build([main], include, tmp_path / "host")


RESOURCE_CASES = [
    ('echo "collect2: fatal error: ld terminated with signal 25 [File size limit exceeded]" >&2; exit 1',
     "file size", "raise the file size limit (ulimit -f)"),
    ('echo "/usr/bin/ld: final link failed: No space left on device" >&2; exit 1', "space", "free space in "),
    ("echo \"as: Fatal error: can't write 17 bytes to section .text.startup of x.o: 'No space left on device'\" >&2;"
     " exit 1", "space", "free space in "),
    ('echo "cc1: out of memory allocating 32012 bytes" >&2; exit 1', "memory", "free memory"),
    ('echo "gcc: fatal error: Killed signal terminated program cc1" >&2; exit 1', "signal", "free memory"),
    ("kill -KILL $$", "signal", "free memory"),
    ("kill -XFSZ $$", "file size", "raise the file size limit (ulimit -f)"),
]


@pytest.mark.parametrize("body, kind, hint", RESOURCE_CASES)
def test_gcc_stopped_by_the_system_says_what_ran_out_exit_8(tmp_path, monkeypatch, body, kind, hint):
    monkeypatch.setenv("BOBC_CACHE_DIR", "off")
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    _fake_gcc(tmp_path, monkeypatch, body)
    with pytest.raises(gcc.HostBuildError) as raised:
        _build(tmp_path)
    error = raised.value
    assert isinstance(error, gcc.HostResourceError) and error.kind == kind
    assert error.exit_code == 8
    assert "bobc bug" not in error.render()
    assert error.hint.startswith(hint) or hint in error.hint, error.hint
    if kind == "space":
        assert f"free space in {tmp_path} " in error.hint        # TMPDIR, not the bobc-proc-* inside it
    if kind == "signal":
        assert "killed by SIGKILL" in error.message


def test_a_real_compile_error_is_still_a_bobc_bug(tmp_path, monkeypatch):
    """A diagnostic that quotes a source line holding resource words is still a compile error."""
    monkeypatch.setenv("BOBC_CACHE_DIR", "off")
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    _fake_gcc(tmp_path, monkeypatch, "printf '%s\\n' \"host_plan.c:3:5: error: expected ';' before '}' token\" "
                                     "'    3 |     rt_fail(\"out of memory: No space left on device\")' >&2; exit 1")
    with pytest.raises(gcc.HostBuildError) as raised:
        _build(tmp_path)
    assert not isinstance(raised.value, gcc.HostResourceError)
    assert raised.value.exit_code == 1
    assert raised.value.hint == "this is a bobc bug if the plan checked: please report it with the plan"


def test_a_full_cache_folder_builds_without_storing_and_warns_once(tmp_path, monkeypatch, capsys):
    """Every gcc whose output lies in the cache folder fails as `as` does on a full disk; the
    build still succeeds (the objects compiled in the command's temporary folder), says so in
    one warning line, and stores nothing."""
    cache_folder = tmp_path / "cache"
    monkeypatch.setenv("BOBC_CACHE_DIR", str(cache_folder))
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    monkeypatch.setattr(gcc, "_warned_full_cache", False)
    _fake_gcc(tmp_path, monkeypatch, f"""for word in "$@"; do
  case "$word" in {cache_folder}/*) echo "as: Fatal error: can't write 17 bytes to section .text of $word: 'No space left on device'" >&2; exit 1;; esac
done
exec "{REAL_GCC}" "$@\"""")
    library_folder = tmp_path / "runtime"
    library_folder.mkdir()
    (library_folder / "util.h").write_text("int a(void);\nint b(void);\n")
    for name in ("a", "b"):
        (library_folder / f"{name}.c").write_text(f'#include "util.h"\nint {name}(void) {{ return 1; }}\n')
    main = tmp_path / "main.c"
    main.write_text('#include "util.h"\nint main(void) { return a() + b() - 2; }\n')
    with cache.process_temporaries():
        gcc.build([main], [library_folder], tmp_path / "host",
                  library=[library_folder / "a.c", library_folder / "b.c"])
    assert subprocess.run([str(tmp_path / "host")]).returncode == 0
    warnings = [line for line in capsys.readouterr().err.splitlines() if "warning" in line]
    assert warnings == [f"bobc: warning: the cache folder {cache_folder} has no room (No space left on device): "
                        "this build compiled in a temporary folder and stored nothing in the cache; "
                        "free space there to keep the saving"]
    for kind in (gcc.CACHE_KIND, gcc.SOURCE_KIND):
        assert not (cache_folder / kind).exists() or list((cache_folder / kind).iterdir()) == []
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(cache.PROCESS_PREFIX)]


def test_no_room_in_the_temporary_folder_either_names_it(tmp_path, monkeypatch, capsys):
    """The compile fails for lack of space in the cache and again in the temporary folder: the
    error names the temporary folder (where the retry ran), and no warning claims the build went on."""
    cache_folder = tmp_path / "cache"
    monkeypatch.setenv("BOBC_CACHE_DIR", str(cache_folder))
    temporary = tmp_path / "tmp"
    temporary.mkdir()
    monkeypatch.setenv("TMPDIR", str(temporary))
    monkeypatch.setattr(gcc, "_warned_full_cache", False)
    _fake_gcc(tmp_path, monkeypatch, 'echo "/usr/bin/ld: final link failed: No space left on device" >&2; exit 1')
    with pytest.raises(gcc.HostResourceError) as raised:
        _build(tmp_path)
    assert raised.value.kind == "space"
    assert f"free space in {temporary}" in raised.value.hint
    assert "warning" not in capsys.readouterr().err
