"""The native host interpreter (runtime_c/native_*.c), built by gcc once per content.

The executable is the same for every program: its sources (the Makefile's
NATIVE_SRC), the headers beside them, the flags and the compiler decide its bytes,
so it is kept in bobc's user cache under a hash of those (as bobc/host/gcc.py keeps
the runtime's objects) and a build only appends a program to it.
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


def sources(runtime: Path) -> list[Path]:
    """NATIVE_SRC of runtime_c/Makefile: the one list of the interpreter's sources."""
    makefile = (runtime / "Makefile").read_text(encoding="utf-8")
    found = re.search(r"^NATIVE_SRC\s*:=\s*(.+)$", makefile, re.MULTILINE)
    if not found:
        raise BobcError(f"{runtime / 'Makefile'} has no NATIVE_SRC line (the native host's sources)")
    return [runtime / name for name in found.group(1).split()]


def interpreter_bytes() -> bytes:
    """The statically linked interpreter, from the cache or built now."""
    runtime = shared_folder("runtime_c")
    compiler = gcc.compiler()
    listed = sources(runtime)
    key = gcc.library_key(compiler, listed, [runtime]) + "-static"
    cached = cache.read(CACHE_KIND, key)
    if cached is not None and cached[:4] == b"\x7fELF":
        return cached
    scratch = Path(tempfile.mkdtemp(prefix="bobc-native-"))
    try:
        output = scratch / "native-host"
        # each source by its base name, from the runtime folder: gcc records only base names
        command = [compiler, *gcc.CFLAGS, "-I", ".", *(source.name for source in listed),
                   "-static", "-o", str(output), "-lm"]
        import subprocess

        result = subprocess.run(command, cwd=runtime, capture_output=True, text=True)
        if result.returncode != 0:
            raise gcc.HostBuildError(
                "gcc could not build the native host interpreter:\n" + (result.stderr or result.stdout).strip(),
                hint="this is a bobc bug: please report it with the output above")
        data = output.read_bytes()
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    cache.write(CACHE_KIND, key, data)
    return data
