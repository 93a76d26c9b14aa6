"""Building the host with gcc: C11, warnings as errors, statically linked.

Static linking is what lets the host run on a GPU node that has only the
NVIDIA kernel driver: no libcuda, no CUDA runtime, no matching glibc needed.
"""
from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

from ..errors import BobcError

CFLAGS = ("-std=c11", "-O2", "-Wall", "-Wextra", "-Werror", "-D_DEFAULT_SOURCE")


class HostBuildError(BobcError):
    pass


def compiler() -> str:
    found = shutil.which("gcc") or shutil.which("cc")
    if not found:
        raise HostBuildError("no C compiler found (gcc or cc)",
                             hint="install gcc (Debian: apt-get install gcc)")
    return found


def build(sources: list[Path], include_dirs: list[Path], output: Path, static: bool = True) -> None:
    """Compile and link `sources` into `output`; a compiler diagnostic becomes a HostBuildError."""
    command = [compiler(), *CFLAGS]
    for folder in include_dirs:
        command += ["-I", str(folder)]
    command += [str(s) for s in sources]
    command += ["-o", str(output)]
    if static:
        command.append("-static")
    command.append("-lm")
    result = subprocess.run(command, capture_output=True, text=True)
    if result.returncode != 0:
        diagnostics = (result.stderr or result.stdout).strip()
        raise HostBuildError(f"gcc could not build the host {output}:\n{diagnostics}",
                             hint="this is a bobc bug if the plan checked: please report it with the plan")
