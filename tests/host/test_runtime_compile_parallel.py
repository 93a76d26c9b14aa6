"""The runtime's sources are compiled side by side on a cache miss, and the build says so (probe s29
speed, findings 1 and 7).  Before, `library_objects` ran one gcc after another (2.2 s of CPU, most of
a first build) and a first build printed nothing for 8-9 s.  Now at most os.cpu_count() gcc run at
once, the objects and so the host are the same bytes, the error of a failed compile is the first
failing source's in the library's order (not whichever compiler finished first), and one line on
stderr says the runtime is being compiled, on a miss only; stdout is unchanged."""
from __future__ import annotations

import shutil
import subprocess
import threading
from pathlib import Path

import pytest

from bobc.host import gcc

pytestmark = pytest.mark.skipif(shutil.which("gcc") is None, reason="needs gcc")

HEADER = "int f0(int x);\nint f1(int x);\nint f2(int x);\nint f3(int x);\n"
NOTICE_FIRST = ("bobc: compiling the C runtime (once: later builds with this runtime and C compiler "
                "reuse it from the cache)\n")
NOTICE_OFF = "bobc: compiling the C runtime (BOBC_CACHE_DIR=off: every build compiles it)\n"


@pytest.fixture
def library(tmp_path, monkeypatch):
    source = tmp_path / "src"
    source.mkdir()
    (source / "lib.h").write_text(HEADER)
    for k in range(4):
        (source / f"f{k}.c").write_text(f'#include "lib.h"\nint f{k}(int x) {{ return x + {k}; }}\n')
    (source / "main.c").write_text('#include "lib.h"\n#include <stdio.h>\n'
                                   'int main(void) { printf("%d\\n", f0(1) + f1(1) + f2(1) + f3(1)); return 0; }\n')
    monkeypatch.setenv("BOBC_CACHE_DIR", str(tmp_path / "cache"))
    return source


def sources(folder: Path) -> list[Path]:
    return [folder / f"f{k}.c" for k in range(4)]


def test_the_runtime_sources_are_compiled_side_by_side(library, monkeypatch):
    """Two compilers must run at once: each waits at a barrier for another (serially, the first
    would wait alone and the barrier break)."""
    monkeypatch.setattr(gcc.os, "cpu_count", lambda: 4)
    meeting = threading.Barrier(2, timeout=60)
    ran = []
    real = gcc._run

    def meets(command, what, compilers=None):
        ran.append(threading.current_thread().name)
        if len(ran) <= 2:
            meeting.wait()                  # BrokenBarrierError when the compiles run one by one
        real(command, what, compilers)

    monkeypatch.setattr(gcc, "_run", meets)
    objects, leftover = gcc.library_objects(gcc.compiler(), sources(library), [library])
    assert leftover is None and [o.name for o in objects] == ["f0.o", "f1.o", "f2.o", "f3.o"]
    assert len(ran) == 4 and len(set(ran)) > 1


def test_the_host_is_the_bytes_of_one_gcc_command(library, tmp_path):
    oracle = tmp_path / "oracle"
    subprocess.run([gcc.compiler(), *gcc.CFLAGS, "-I", str(library), str(library / "main.c"),
                    *map(str, sources(library)), "-o", str(oracle), "-static", "-lm"], check=True)
    gcc.build([library / "main.c"], [library], tmp_path / "host", library=sources(library))
    assert (tmp_path / "host").read_bytes() == oracle.read_bytes()
    assert subprocess.run([str(tmp_path / "host")], capture_output=True, text=True).stdout == "10\n"


def test_a_failed_compile_names_the_first_failing_source_in_order(library, tmp_path, monkeypatch):
    """f1.c and f3.c are broken; f3.c's compiler is made to finish first, and the error is f1.c's.
    Nothing is published and no scratch folder is left in the cache."""
    monkeypatch.setattr(gcc.os, "cpu_count", lambda: 4)
    (library / "f1.c").write_text("int f1(int x) { return x +; }\n")
    (library / "f3.c").write_text("int f3(int x) { return y; }\n")
    later_failed = threading.Event()
    real = gcc._run

    def ordered(command, what, compilers=None):
        try:
            if "f1.c" in what:
                later_failed.wait(timeout=60)      # f3.c's error comes first in time
            real(command, what, compilers)
        finally:
            if "f3.c" in what:
                later_failed.set()

    monkeypatch.setattr(gcc, "_run", ordered)
    with pytest.raises(gcc.HostBuildError) as refused:
        gcc.library_objects(gcc.compiler(), sources(library), [library])
    message = str(refused.value)
    assert message.startswith(f"gcc could not build the runtime source {library / 'f1.c'}:\n")
    assert "f3.c" not in message
    kind = tmp_path / "cache" / gcc.CACHE_KIND
    assert not kind.exists() or list(kind.iterdir()) == []


def test_a_miss_says_so_on_stderr_once_and_a_hit_says_nothing(library, tmp_path, capfd):
    gcc.library_objects(gcc.compiler(), sources(library), [library])
    assert capfd.readouterr() == ("", NOTICE_FIRST)
    gcc.library_objects(gcc.compiler(), sources(library), [library])
    assert capfd.readouterr() == ("", "")


def test_with_the_cache_off_every_build_says_so(library, monkeypatch, capfd):
    monkeypatch.setenv("BOBC_CACHE_DIR", "off")
    for _ in range(2):
        objects, leftover = gcc.library_objects(gcc.compiler(), sources(library), [library])
        shutil.rmtree(leftover)
        assert capfd.readouterr() == ("", NOTICE_OFF)


def test_an_unwritable_cache_says_every_build_compiles_it(library, tmp_path, monkeypatch, capfd):
    blocked = tmp_path / "blocked"
    blocked.write_text("a file where the cache folder would be")
    monkeypatch.setenv("BOBC_CACHE_DIR", str(blocked / "bobc"))
    from bobc import cache

    monkeypatch.setattr(cache, "_said_not_a_folder", None)     # said once a command; this one not yet
    objects, leftover = gcc.library_objects(gcc.compiler(), sources(library), [library])
    shutil.rmtree(leftover)
    # a path through a file: said once first, with the variable and what to do (docs/cache.md; s42)
    assert capfd.readouterr() == ("", f"bobc: warning: the cache folder {blocked / 'bobc'} (BOBC_CACHE_DIR) cannot be "
                                      "made (a part of its path is a file, not a folder): this command runs without a "
                                      "cache (the same work and output, done again next time); point BOBC_CACHE_DIR "
                                      "at a folder (or unset it for ~/.cache/bobc)\n"
                                      f"bobc: compiling the C runtime (the cache folder {blocked / 'bobc'} "
                                      f"cannot be written: every build compiles it)\n")
