"""The native host interpreter (runtime_c/native_*.c), built by gcc once per content.

The executable is the same for every program: its sources (the Makefile's
NATIVE_SRC), the headers beside them, the flags and the compiler decide its bytes,
so it is kept in bobc's user cache under a hash of those (as bobc/host/gcc.py keeps
the runtime's objects) and a build only appends a program to it.

Most of NATIVE_SRC is also the runtime's (LIB_SRC), compiled with the same flags: those
objects are taken from the runtime's cache entry (gcc.library_objects, compiled then when it
is missing), the interpreter's own sources are compiled beside them, concurrently, and the
objects are linked in NATIVE_SRC's order.  That is the same executable, byte for byte, as one
`gcc ... NATIVE_SRC -static` in runtime_c/ (gcc names each object's STT_FILE after the
source's base name either way, and nothing else in an object depends on the source's path or
the -I folder's spelling; tests/host/test_native_interpreter_objects.py holds it to that).
"""
from __future__ import annotations

import re
import shutil
import tempfile
from pathlib import Path

from .. import cache
from ..errors import BobcError
from ..host import gcc
from ..resources import shared_folder

CACHE_KIND = "native-interpreter"


def sources(runtime: Path, variable: str = "NATIVE_SRC") -> list[Path]:
    """NATIVE_SRC of runtime_c/Makefile: the one list of the interpreter's sources (`variable`:
    another list of that Makefile, LIB_SRC for the runtime's)."""
    makefile = (runtime / "Makefile").read_text(encoding="utf-8")
    found = re.search(rf"^{variable}\s*:=\s*(.+)$", makefile, re.MULTILINE)
    if not found:
        what = "the native host's sources" if variable == "NATIVE_SRC" else "the runtime's sources"
        raise BobcError(f"{runtime / 'Makefile'} has no {variable} line ({what})")
    return [runtime / name for name in found.group(1).split()]


def interpreter_bytes(retry: bool = True) -> bytes:
    """The statically linked interpreter, from the cache or built now.  A link that lost an object
    the cache held (the cache folder deleted while the build ran: docs/cache.md says that is
    always safe) builds it again, once, looking the objects up or compiling them anew (probe s43
    cacherace finding 2, as gcc.build)."""
    runtime = shared_folder("runtime_c")
    compiler = gcc.compiler()
    listed = sources(runtime)
    # linked, not only compiled: the linker is part of what decides its bytes
    key = cache.digest(gcc.library_key(compiler, listed, [runtime]), gcc.linker_identity()) + "-static"
    cached = cache.read(CACHE_KIND, key)
    if cached is not None and cached[:4] == b"\x7fELF":
        return cached
    scratch = cache.own_folder(Path(tempfile.mkdtemp(prefix="bobc-native-")))
    leftover = None
    try:
        objects: dict[str, Path] = {}
        if cache.folder() is not None:
            # the runtime's objects: cached (or compiled and kept there now) for every later build
            library = sources(runtime, "LIB_SRC")
            found, leftover = gcc.library_objects(compiler, library, [runtime])
            objects = {source.name: found for source, found in zip(library, found)}
        else:
            # no cache to keep the runtime's objects in: compile only what the interpreter needs
            gcc.compiling_notice(scratch)
        own = [source for source in listed if source.name not in objects]
        gcc.compile_objects(compiler, [(source, scratch / source.with_suffix(".o").name,
                                        f"the native host interpreter (its source {source})") for source in own],
                            [runtime])
        objects.update((source.name, scratch / source.with_suffix(".o").name) for source in own)
        output = scratch / "native-host"
        command = [compiler, *gcc.CFLAGS, *(str(objects[source.name]) for source in listed),
                   "-static", "-o", str(output), "-lm"]
        # gcc's failure for lack of space, memory or the file size limit says so (gcc._run,
        # resource_failure); any other is a bug of bobc's (fix-diskfull's note)
        try:
            gcc._run(command, "the native host interpreter")
        except gcc.HostBuildError:
            if not retry or all(found.is_file() for found in objects.values()):
                raise
            data = None
        else:
            data = output.read_bytes()
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
        if leftover is not None:
            shutil.rmtree(leftover, ignore_errors=True)
    if data is None:
        return interpreter_bytes(retry=False)
    cache.write(CACHE_KIND, key, data)
    return data
