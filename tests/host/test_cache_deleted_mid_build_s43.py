"""The cache folder deleted while a build runs (probe s43 cacherace finding 2).

docs/cache.md: "Deleting the folder is always safe", and a missing cache folder "only loses the
saving".  A cold `bobc build` whose cache folder was removed while gcc compiled the runtime into a
scratch folder inside it failed, exit 1, blaming the C compiler ("could not build the runtime
source ... can't create DIR/runtime-objects/.tmp-XXXX/x.o: No such file or directory ... check that
this gcc compiles and links a C program"); so did a build whose objects the cache held (found, or
published by the early compile during evaluation) and lost before the link.  Now the compile is
done again in the command's temporary folder, and a link that lost a cached object looks the
objects up (or compiles them) again: the build succeeds.  Expected: the documented rule and a
host that runs (exit 0 from its main), never the implementation's own output.

A fake gcc on PATH removes the cache folder at the chosen moment, then runs the real gcc.
"""
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


def _setup(tmp_path: Path, monkeypatch, when: str):
    """`when`: a shell `case` pattern over gcc's arguments; the first gcc that matches removes the
    cache folder (once: a mark file) before running."""
    cache_folder = tmp_path / "cache"
    mark = tmp_path / "removed"
    monkeypatch.setenv("BOBC_CACHE_DIR", str(cache_folder))
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    monkeypatch.setattr(tempfile, "tempdir", None)
    folder = tmp_path / "bin"
    folder.mkdir()
    fake = folder / "gcc"
    fake.write_text(f"""#!/bin/sh
case "$*" in {when}) if mkdir "{mark}" 2>/dev/null; then rm -rf "{cache_folder}"; fi;; esac
exec "{REAL_GCC}" "$@"
""")
    fake.chmod(0o755)
    monkeypatch.setenv("PATH", f"{folder}{os.pathsep}{os.environ['PATH']}")
    library_folder = tmp_path / "runtime"
    library_folder.mkdir()
    (library_folder / "util.h").write_text("int a(void);\nint b(void);\n")
    for name in ("a", "b"):
        (library_folder / f"{name}.c").write_text(f'#include "util.h"\nint {name}(void) {{ return 1; }}\n')
    main = tmp_path / "main.c"
    main.write_text('#include "util.h"\nint main(void) { return a() + b() - 2; }\n')
    return cache_folder, mark, main, library_folder, [library_folder / "a.c", library_folder / "b.c"]


def _build(main, library_folder, library, host):
    with cache.process_temporaries():
        gcc.build([main], [library_folder], host, library=library)


def test_the_cache_removed_while_the_runtime_compiles_into_it(tmp_path, monkeypatch):
    cache_folder, mark, main, library_folder, library = _setup(tmp_path, monkeypatch, '*" -c "*/runtime/b.c*')
    _build(main, library_folder, library, tmp_path / "host")
    assert mark.exists(), "the cache folder was never removed: the test did not test"
    assert subprocess.run([str(tmp_path / "host")]).returncode == 0
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(cache.PROCESS_PREFIX)]


def test_the_cache_removed_after_its_objects_were_found_before_the_link(tmp_path, monkeypatch):
    cache_folder, mark, main, library_folder, library = _setup(tmp_path, monkeypatch, "NEVER")
    _build(main, library_folder, library, tmp_path / "first")          # fills the cache
    assert (cache_folder / gcc.CACHE_KIND).is_dir()
    _setup_link = tmp_path / "bin" / "gcc"
    _setup_link.write_text(_setup_link.read_text().replace("NEVER", f'*" -o {tmp_path}/host"*'))
    _build(main, library_folder, library, tmp_path / "host")
    assert mark.exists(), "the cache folder was never removed: the test did not test"
    assert subprocess.run([str(tmp_path / "host")]).returncode == 0


def test_the_cache_removed_before_the_native_interpreter_links(tmp_path, monkeypatch):
    """The native host interpreter (native/interpreter.py) links the runtime's objects from the
    cache: removed before that link, it is built again, not refused.  A small runtime folder of
    its own (the Makefile's LIB_SRC and NATIVE_SRC lines) keeps the test fast."""
    from bobc.native import interpreter

    cache_folder, mark, main, library_folder, library = _setup(
        tmp_path, monkeypatch, '*"-static -o "*/native-host*')
    (library_folder / "Makefile").write_text("LIB_SRC := a.c b.c\nNATIVE_SRC := a.c b.c main.c\n")
    shutil.copy(main, library_folder / "main.c")
    monkeypatch.setattr(interpreter, "shared_folder", lambda name: library_folder)
    with cache.process_temporaries():
        data = interpreter.interpreter_bytes()
    assert mark.exists(), "the cache folder was never removed: the test did not test"
    host = tmp_path / "interpreter"
    host.write_bytes(data)
    host.chmod(0o755)
    assert subprocess.run([str(host)]).returncode == 0
