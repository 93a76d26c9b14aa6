"""The native host interpreter reuses the runtime's objects (probe s29 speed, finding 2).

Before, interpreter_bytes compiled its 14 sources in one serial gcc command, 12 of which the
runtime's objects (gcc.library_objects, same flags) had just compiled.  Now the shared ones come
from the runtime's cache entry, only the interpreter's own sources are compiled (side by side),
and the objects are linked in NATIVE_SRC's order: the same executable, byte for byte, as the one
gcc command in runtime_c/ (its `-I .` and base names against the objects' `-I <folder>` and full
paths change no byte)."""
from __future__ import annotations

import shutil
import subprocess

import pytest

from bobc import cache
from bobc.host import gcc
from bobc.native import interpreter
from bobc.resources import shared_folder

pytestmark = pytest.mark.skipif(shutil.which("gcc") is None, reason="needs gcc")


@pytest.fixture(scope="module")
def one_command(tmp_path_factory):
    """The oracle: NATIVE_SRC in one gcc command from runtime_c/, as interpreter_bytes built it before."""
    runtime = shared_folder("runtime_c")
    output = tmp_path_factory.mktemp("oracle") / "native-host"
    done = subprocess.run([gcc.compiler(), *gcc.CFLAGS, "-I", ".",
                           *(s.name for s in interpreter.sources(runtime)), "-static", "-o", str(output), "-lm"],
                          cwd=runtime, capture_output=True, text=True)
    if done.returncode != 0 and "cannot find -lc" in done.stderr:
        pytest.skip("no static libc")
    assert done.returncode == 0, done.stderr
    return output.read_bytes()


def compiled_sources(monkeypatch) -> list[str]:
    seen: list[str] = []
    real = gcc.compile_objects

    def recording(compiler, jobs, include_dirs, *running):     # running: an early compile's (s43)
        seen.extend(source.name for source, _, _ in jobs)
        return real(compiler, jobs, include_dirs, *running)

    monkeypatch.setattr(gcc, "compile_objects", recording)
    return seen


def test_the_interpreter_reuses_the_runtime_objects(cache_dir, monkeypatch, one_command):
    runtime = shared_folder("runtime_c")
    library = interpreter.sources(runtime, "LIB_SRC")
    gcc.library_objects(gcc.compiler(), library, [runtime])        # a plan host's build came first
    seen = compiled_sources(monkeypatch)
    assert interpreter.interpreter_bytes() == one_command
    own = [s.name for s in interpreter.sources(runtime) if s.name not in {x.name for x in library}]
    assert own and seen == own                                    # native_host.c, native_peer.c only


def test_a_cold_cache_keeps_the_runtime_objects_for_the_next_build(cache_dir, monkeypatch, one_command):
    seen = compiled_sources(monkeypatch)
    assert interpreter.interpreter_bytes() == one_command
    runtime = shared_folder("runtime_c")
    library = interpreter.sources(runtime, "LIB_SRC")
    assert seen[:len(library)] == [s.name for s in library]        # the runtime's entry, filled now
    seen.clear()
    objects, leftover = gcc.library_objects(gcc.compiler(), library, [runtime])
    assert leftover is None and seen == []                         # the next plan host compiles nothing
    assert interpreter.interpreter_bytes() == one_command and seen == []   # and the interpreter is cached


def test_with_the_cache_off_only_the_interpreter_sources_are_compiled(monkeypatch, one_command, capfd):
    monkeypatch.setenv("BOBC_CACHE_DIR", "off")
    assert cache.folder() is None
    seen = compiled_sources(monkeypatch)
    assert interpreter.interpreter_bytes() == one_command
    assert seen == [s.name for s in interpreter.sources(shared_folder("runtime_c"))]
    assert capfd.readouterr().err == "bobc: compiling the C runtime (BOBC_CACHE_DIR=off: every build compiles it)\n"
