"""A cache folder with no room, while the runtime compiles early (probe s43 cacherace finding 1).

`bobc build` compiles the runtime's objects in a thread of its own from its start
(gcc.compiled_early) and says that thread's lines when the link takes the objects.  Its notice was
worded when its scratch folder was made -- inside the cache, before any compile found the cache
full -- so a build on a full cache said

    bobc: warning: the cache folder DIR has no room (...): this build compiled in a temporary folder and stored nothing in the cache; ...
    bobc: compiling the C runtime (once: later builds with this runtime and C compiler reuse it from the cache)

the second line false (nothing was stored: the objects were compiled again in the command's
temporary folder) and contradicting the first.  docs/cache.md gives the words for this case:
`(the cache folder DIR has no room: this build stores nothing there)`, which is what the build
said before the early compile.  Expected values: those documented words, and the cache folder
itself (no runtime entry in it), never the implementation's own output.

The fake gcc (as tests/host/test_gcc_resource_failures.py's) fails as `as` does on a full disk for
every output inside the cache folder; a runtime source's compile first waits for the file GO, so
the test decides which thread meets the full cache first.
"""
from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
import time
from pathlib import Path

import pytest

from bobc import cache
from bobc.host import gcc

pytestmark = pytest.mark.skipif(shutil.which("gcc") is None, reason="needs gcc")

REAL_GCC = shutil.which("gcc")


def _setup(tmp_path: Path, monkeypatch):
    cache_folder = tmp_path / "cache"
    go = tmp_path / "GO"
    monkeypatch.setenv("BOBC_CACHE_DIR", str(cache_folder))
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    monkeypatch.setattr(tempfile, "tempdir", None)
    monkeypatch.setattr(gcc, "_warned_full_cache", None)
    folder = tmp_path / "bin"
    folder.mkdir()
    fake = folder / "gcc"
    fake.write_text(f"""#!/bin/sh
case "$*" in *" -c "*/runtime/*) while [ ! -e "{go}" ]; do sleep 0.05; done;; esac
for word in "$@"; do
  case "$word" in {cache_folder}/*) echo "as: Fatal error: can't write 17 bytes to section .text of $word: 'No space left on device'" >&2; exit 1;; esac
done
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
    library = [library_folder / "a.c", library_folder / "b.c"]
    return cache_folder, go, main, library_folder, library


def _lines(cache_folder: Path):
    warning = (f"bobc: warning: the cache folder {cache_folder} has no room (No space left on device): "
               "this build compiled in a temporary folder and stored nothing in the cache; "
               "free space there to keep the saving")
    notice = (f"bobc: {gcc.COMPILING_NOTICE} (the cache folder {cache_folder} has no room: "
              "this build stores nothing there)")        # docs/cache.md's words for this case
    return warning, notice


def _stored(cache_folder: Path, kind: str) -> list[str]:
    folder = cache_folder / kind
    return [p.name for p in folder.iterdir() if not p.name.startswith(".tmp-")] if folder.exists() else []


def test_the_plan_source_meets_the_full_cache_first(tmp_path, monkeypatch, capsys):
    """The plan's own compile fails for space first (the runtime's waits for GO): the warning, then
    the notice in the documented no-room words -- as a build that compiles the runtime when it
    links says it -- never `once: later builds ... reuse it from the cache`."""
    cache_folder, go, main, library_folder, library = _setup(tmp_path, monkeypatch)
    with cache.process_temporaries():
        with gcc.compiled_early(lambda: (library, [library_folder])) as early:
            assert early is not None
            real_source_object = gcc.source_object

            def source_object(*args, **options):
                try:
                    return real_source_object(*args, **options)
                finally:
                    go.touch()          # the runtime's compile goes on (and fails) only now

            monkeypatch.setattr(gcc, "source_object", source_object)
            gcc.build([main], [library_folder], tmp_path / "host", library=library)
    assert subprocess.run([str(tmp_path / "host")]).returncode == 0
    warning, notice = _lines(cache_folder)
    assert [line for line in capsys.readouterr().err.splitlines() if line.startswith("bobc:")] == [warning, notice]
    assert _stored(cache_folder, gcc.CACHE_KIND) == []


def test_the_runtime_meets_the_full_cache_first(tmp_path, monkeypatch, capsys):
    """The runtime's early compile fails for space first and is done again in the temporary
    folder before the plan's source compiles: its notice, when said, names the no-room case, and
    the warning follows once; nothing of the runtime is stored."""
    cache_folder, go, main, library_folder, library = _setup(tmp_path, monkeypatch)
    go.touch()
    with cache.process_temporaries():
        with gcc.compiled_early(lambda: (library, [library_folder])) as early:
            assert early is not None
            deadline = time.monotonic() + 120
            while early.thread.is_alive():
                assert time.monotonic() < deadline, "the early compile did not end"
                time.sleep(0.02)
            gcc.build([main], [library_folder], tmp_path / "host", library=library)
    assert subprocess.run([str(tmp_path / "host")]).returncode == 0
    warning, notice = _lines(cache_folder)
    assert [line for line in capsys.readouterr().err.splitlines() if line.startswith("bobc:")] == [notice, warning]
    assert _stored(cache_folder, gcc.CACHE_KIND) == []
