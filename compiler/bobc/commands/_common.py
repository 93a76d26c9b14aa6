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


# what an output naming a kernel source is told (exit 8: a file the build read, as a module is)
KERNEL_SOURCE = "a kernel source the build read"


def kernel_files(program, plan, target) -> list[Path]:
    """Every kernel source (.sass) a build of `plan` (from `program`, loaded or recalled) for
    `target` read, for its outputs' alias checks: each region's source as the certifier finds it
    (bobc.kernel_search, in the program's search path, then specs/; with a per-target variant,
    its base beside it, which the search reads to compare their .kernel names) -- read on every
    build, loaded or recalled from the cache -- and every source this process assembled for
    `target` (bobc.kernel_cache.sources_read: the ones evaluating the plan read, bobc's own
    stage kernel).  A path that is not there now is left out (read_files)."""
    from ..errors import BobcError
    from ..kernel_cache import ABSENT, sources_read
    from ..kernel_search import find_source, variant_suffix
    from ..language.modules import specs_folder

    found: dict[str, Path] = {}
    folders = [*getattr(program, "search_path", ()), specs_folder()]
    for region in plan.program.regions if plan is not None and plan.program else ():
        try:
            source = find_source(region.identity, folders, target)
        except (BobcError, OSError):
            continue        # the certifier refused it first; nothing to protect that it read
        if source is None:
            continue
        found.setdefault(str(source), source)
        suffix = variant_suffix(source)
        if suffix is not None:
            base = source.with_name(source.name.removesuffix(f".{suffix}.sass") + ".sass")
            found.setdefault(str(base), base)
    for path, digest in sources_read(target):
        if digest != ABSENT:
            found.setdefault(path, Path(path))
    return list(found.values())


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
