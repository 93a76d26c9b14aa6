"""Argument helpers shared by the subcommands."""
from __future__ import annotations

import os
from pathlib import Path

from ..errors import UsageError
from ..targets import DEFAULT_TARGET as _DEFAULT, TARGETS


# Every subcommand's default target (--target, --arch): the one `bobc build` and `make build`
# use, so `bobc check PLAN` certifies what `bobc build PLAN` builds (README, "Targets").
DEFAULT_TARGET = _DEFAULT.name   # declared once, in targets.py


def path_kind(text: str, option: str = "") -> str | None:
    """'folder', 'file' (a regular file, or a link to one), 'other' (a FIFO, a device, a broken
    or looping link...) or None (nothing there) for the path `text`; a path the system cannot
    even look up (a name longer than 255 bytes, a folder on the way that cannot be searched) is
    a usage error naming it and the system's reason, one line, as a missing file is (pathlib's
    is_file() and is_dir() raise for those: probe s30 cli finding 3).  `option` ('-I ',
    '--kernels '...) says which option gave the path."""
    import errno
    import stat

    try:
        mode = os.stat(text).st_mode
    except OSError as error:
        if error.errno in (errno.ENOENT, errno.ENOTDIR, errno.ELOOP):
            try:
                os.lstat(text)
            except OSError:
                return None
            return "other"      # a broken or looping symbolic link: language.modules.not_a_file names it
        raise cannot_look_up(text, error, option) from None
    except ValueError:          # an embedded NUL byte
        raise UsageError(f"{option}{text!r}: a path cannot hold a NUL byte") from None
    if stat.S_ISDIR(mode):
        return "folder"
    return "file" if stat.S_ISREG(mode) else "other"


def cannot_look_up(text: str, error: OSError, option: str = "") -> UsageError:
    """The refusal of a path the system cannot look up (os.stat failed other than 'not there')."""
    import errno

    hint = ("each part of a path (between two /) is at most 255 bytes" if error.errno == errno.ENAMETOOLONG
            else None)
    from ..errors import printable

    return UsageError(f"cannot look up {option}{printable(text)}: {error.strerror or error}", hint=hint)


def existing_file(text: str, option: str = "") -> Path:
    """`text` as a Path when it names a regular file (or a link to one); else a usage error
    saying what is there: a folder, a FIFO, a broken or looping symbolic link, or nothing."""
    from ..language.modules import not_a_file
    from ..errors import printable

    path = Path(text)
    if path_kind(text, option) != "file":
        what = not_a_file(text)
        said = printable(text)      # one line whatever the name holds (a newline is "?"), whole
        if what == "a folder":
            raise UsageError(f"{option}{said} is a folder, not a file")
        if what is not None:
            raise UsageError(f"{option}{said} is {what}, not a regular file")
        raise UsageError(f"{option}{said}: no such file" if option else f"no such file: {said}")
    return path


def existing_plan(text: str, command: str, operations: tuple[str, ...]) -> Path:
    """existing_file for the plan of `bobc run` and `bobc sim`, whose plan comes before the
    operation: an operation's word given where the plan goes (`bobc sim --images DIR train`, the
    plan left out), naming no file, is said so (probe s36 newuser2: it was "no such file: train"
    alone)."""
    try:
        return existing_file(text)
    except UsageError as refused:
        if text in operations and path_kind(text) is None:
            refused.hint = (f"{text} is the operation, and the plan module comes before it: "
                            f"bobc {command} PLAN {text} ...")
        raise


def existing_path(text: str, missing: str, option: str = "") -> str:
    """path_kind(text) for a path that must be there (a file or a folder): nothing there is the
    usage error `missing` (`no such image folder or host: X`, X as safe_io.shown shows it)."""
    kind = path_kind(text, option)
    if kind is None:
        raise UsageError(missing)
    return kind


def existing_folder(text: str, option: str, hint: str | None = None) -> Path:
    """`text` as a Path when it names a folder; else a usage error naming the option."""
    from ..errors import printable

    kind = path_kind(text, f"{option} ")
    if kind != "folder":
        raise UsageError(f"{option} {printable(text)}: " + ("no such folder" if kind is None else "not a folder"), hint=hint)
    return Path(text)


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
    build, loaded or recalled from the cache -- and every source this command assembled for
    `target` (bobc.kernel_cache.sources_read: the ones evaluating the plan read, bobc's own
    stage kernel; cli.main records them per command).  A path that is not there now is left out (read_files)."""
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
    from ..kernel_cache import program_record

    for path, digest in sources_read(target) + sources_read(target, program_record(program)):
        if digest != ABSENT:
            found.setdefault(path, Path(path))
    return list(found.values())


def read_files(paths, what: str) -> list:
    """safe_io.InputFile identities (no bytes) of files a command read besides its inputs (the
    plan's modules, a kernels file), for its outputs' alias checks: an output naming one is
    refused, exit 8, as an output naming an input is.  `what` says what they are in the refusal,
    after the path shown as every source file a message names is (errors.shown_path: relative to
    the working folder when it lies under it -- an imported module is found by an absolute path --
    else absolute; README, "Every source file a message names")."""
    from ..errors import shown_path
    from ..reference.safe_io import InputFile

    found = []
    for path in paths:
        try:
            info = os.stat(path)
        except OSError:
            continue            # not there now: no output can be it
        found.append(InputFile(f"{shown_path(path)} ({what})", b"", os.path.realpath(path), info.st_dev, info.st_ino))
    return found


def refuse_output_over(path, option: str, read: list) -> None:
    """Refuse (OutputWriteFailure, exit 8, nothing written) output `path` when it is one of the
    files in `read` (read_files)."""
    from ..reference.safe_io import OutputSet

    OutputSet(inputs=list(read)).add(path, option)


def refuse_stdout_name(value: str | None, option: str, what: str = "a file") -> None:
    """Refuse (usage, exit 2) `-` as an output path: a Unix user means stdout by it, and bobc
    writes no output to stdout -- a host, a cubin or an image folder is published whole or not
    at all (a synced temporary renamed into place), which a stream cannot be, and stdout carries
    the command's own lines (`wrote ...`, `--listing`, `--json`).  Writing a file named `-` in the
    current folder instead would surprise that user; `./-` still names one (README, "What a user
    is promised"; probe s30 review, leftovers finding 1)."""
    if value == "-":
        from ..errors import UsageError

        raise UsageError(f"{option} -: bobc writes no output to stdout; name {what} "
                         f"({option} ./- for one named '-')")


class folder_made_for:
    """`with folder_made_for(DIR):` around writing files into the folder DIR (--emit-images,
    --extract), which the writing makes when it is missing: when the writing fails, a folder it
    made and left empty is removed again, so "nothing was published; the files there are
    unchanged" holds for the folder too (a script testing `[ -d DIR ]` sees nothing new; probe
    s33 resources 11).  A folder that was there before is left as it was."""

    def __init__(self, folder):
        self.folder = os.fspath(folder)

    def __enter__(self):
        try:
            self.existed = os.path.lexists(self.folder)
        except (OSError, ValueError):
            self.existed = True         # cannot tell: never removed
        return self

    def __exit__(self, kind, error, trace):
        if error is not None and not self.existed:
            try:
                os.rmdir(self.folder)   # only when empty: nothing of anyone's is removed
            except OSError:
                pass
        return False
