"""Argument helpers shared by the subcommands."""
from __future__ import annotations

import os
from pathlib import Path

from ..errors import UsageError
from ..targets import TARGETS


# Every subcommand's default target (--target, --arch): the one `bobc build` and `make build`
# use, so `bobc check PLAN` certifies what `bobc build PLAN` builds (README, "Targets").
DEFAULT_TARGET = "sm_90"


def existing_file(text: str) -> Path:
    """`text` as a Path when it names a regular file (or a link to one); else a usage error
    saying what is there: a folder, a FIFO, a broken or looping symbolic link, or nothing."""
    from ..language.modules import not_a_file

    path = Path(text)
    if not path.is_file():
        what = not_a_file(text)
        if what == "a folder":
            raise UsageError(f"{text} is a folder, not a file")
        if what is not None:
            raise UsageError(f"{text} is {what}, not a regular file")
        raise UsageError(f"no such file: {text}")
    return path


def add_target(parser, default: str | None = DEFAULT_TARGET, flag: str = "--target",
               help: str | None = None) -> None:
    parser.add_argument(flag, default=default, choices=sorted(TARGETS),
                        help=help or f"GPU architecture to build for (default {default})")


def module_files(program) -> list[Path]:
    """Every module file (.bob) `program` was made of: a loaded language.Program's modules, or
    a recall.Recalled's (a build that did not load the program)."""
    paths = getattr(program, "module_paths", None)
    if paths is not None:
        return [Path(p) for p in paths]
    return [Path(module.path) for module in program.modules.values()]


def read_files(paths, what: str) -> list:
    """safe_io.InputFile identities (no bytes) of files a command read besides its inputs (the
    plan's modules, a kernels file), for its outputs' alias checks: an output naming one is
    refused, exit 8, as an output naming an input is.  `what` says what they are in the refusal."""
    from ..reference.safe_io import InputFile

    found = []
    for path in paths:
        try:
            info = os.stat(path)
        except OSError:
            continue            # not there now: no output can be it
        found.append(InputFile(f"{path} ({what})", b"", os.path.realpath(path), info.st_dev, info.st_ino))
    return found


def refuse_output_over(path, option: str, read: list) -> None:
    """Refuse (OutputWriteFailure, exit 8, nothing written) output `path` when it is one of the
    files in `read` (read_files)."""
    from ..reference.safe_io import OutputSet

    OutputSet(inputs=list(read)).add(path, option)
