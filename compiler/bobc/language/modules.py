"""Finding and loading modules: the search path, the parse cache, import cycles.

`import A.B.C` names the file A/B/C.bob in the first folder of the search
path that has it:

  1. the plan's own root (the plan file's folder minus its module path),
  2. the -I folders, in order,
  3. the repository's specs/ (BOBC_SPECS overrides it).

Every module is parsed once per build.  A module's declared name must match
the path it was found at.
"""
from __future__ import annotations

import errno
import os
import re
import stat
from pathlib import Path
from typing import TYPE_CHECKING

from ..errors import BobcError, shown_path
from ..resources import doc, shared_folder

if TYPE_CHECKING:                       # the syntax classes are imported only to load a tree:
    from .syntax import Module          # a warm `bobc check` reads the search path alone (recall.py)


class ModuleError(BobcError):
    """A module cannot be found, is misnamed, or imports itself."""


class IncludeFolderError(ModuleError):
    """An -I that names no folder: the command line is wrong (exit 2, as `bobc dump -I` says it),
    not a module (probe s30 cli finding 7)."""

    exit_code = 2


def specs_folder() -> Path:
    """The standard library: $BOBC_SPECS, else bobc's own specs/ (resources.py)."""
    override = os.environ.get("BOBC_SPECS")
    if override:
        return Path(override)
    return shared_folder("specs")


def _specs_override_note() -> str:
    """For an unknown module's hint: that the standard library was looked for in $BOBC_SPECS,
    and whether that names a folder at all (a user who set it and forgot sees why specs/
    modules are missing)."""
    override = os.environ.get("BOBC_SPECS")
    if not override:
        return ""
    try:
        folder = Path(override).is_dir()
    except OSError:
        folder = False
    if not folder:
        return (f"; the standard library is looked for in BOBC_SPECS={override}, which is not a folder: "
                "unset BOBC_SPECS to use bobc's own specs/")
    return f"; the standard library is looked for in BOBC_SPECS={override}, not in bobc's own specs/"


def not_a_file(path) -> str | None:
    """What is at `path` when it is there but is not a regular file (a link to one is fine):
    'a folder', 'a broken symbolic link (to X)', 'a FIFO (named pipe)'...; None when there is
    nothing there or a regular file."""
    try:
        status = os.lstat(path)
    except OSError:
        return None
    if stat.S_ISLNK(status.st_mode):
        try:
            status = os.stat(path)
        except OSError as error:
            try:
                target = os.readlink(path)
            except OSError:
                target = "?"
            from ..errors import printable

            target = printable(target)      # a link's target may hold a newline too
            if error.errno == errno.ELOOP:
                return f"a symbolic link that loops (to {target})"
            return f"a broken symbolic link (to {target}, which does not exist)"
    mode = status.st_mode
    if stat.S_ISREG(mode):
        return None
    if stat.S_ISDIR(mode):
        return "a folder"
    if stat.S_ISFIFO(mode):
        return "a FIFO (named pipe)"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "not a regular file"


def refuse_broken_plan_link(text: str) -> None:
    """A plan path that is a broken symbolic link or one that loops is refused saying so (as an
    imported module's is), where a command would say only "no such file"."""
    what = not_a_file(text)
    if what is not None and "symbolic link" in what:
        from ..errors import UsageError

        from ..errors import printable

        raise UsageError(f"the plan {printable(text)} is {what}, not a module file",
                         hint="a plan is a regular file A/B/C.bob (or a link to one) that begins "
                              "`module A.B.C`")


def _longest_part_bytes(parts: list[str]) -> int:
    """The bytes of the longest file or folder name the module path's `parts` make (the last
    with its .bob)."""
    return max(len(part.encode("utf-8")) + (4 if index == len(parts) - 1 else 0)
               for index, part in enumerate(parts))


def path_too_long(name: str, path: Path, span=None) -> ModuleError:
    """The refusal of a module whose file path the file system cannot take (ENAMETOOLONG)."""
    parts = name.split(".")
    longest = max(parts, key=lambda part: len(part.encode("utf-8")))
    shown = name if len(name) <= 60 else f"{name[:40]}...{name[-12:]}"
    size = len(longest.encode("utf-8")) + (4 if longest == parts[-1] else 0)
    if size > 255:
        detail = (f"its part {longest[:24]}... names a file or folder of {size:,} bytes, "
                  f"more than the 255 a file name may have")
    else:
        detail = (f"its path ({len(parts):,} parts, {len(os.fsencode(path)):,} bytes) "
                  f"is longer than the file system takes")
    return ModuleError(f"module {shown} cannot be a file: {detail}", span,
                       hint="a module A.B.C is the file A/B/C.bob: each part a file or folder "
                            "name (at most 255 bytes), the whole path at most 4,096; shorten "
                            "the module's name")


def read_module_bytes(path) -> bytes:
    """A module file's bytes, refused by its size (limits.MODULE_FILE_BYTES) before it is read
    whole: at most one byte more than the limit is ever read."""
    from .limits import MODULE_FILE_BYTES

    with open(path, "rb") as file:
        data = file.read(MODULE_FILE_BYTES + 1)
        if len(data) > MODULE_FILE_BYTES:
            try:
                size = f"{os.fstat(file.fileno()).st_size:,} bytes"
            except OSError:
                size = "more bytes"
            raise ModuleError(f"the module file {shown_path(path)} has {size}: more than the limit of "
                              f"{MODULE_FILE_BYTES:,} bytes for a module ({doc('limits.md')})",
                              hint="a module this large is not a plan written by hand; split "
                                   "it into modules, or keep bulk data in files the plan's host "
                                   "reads")
    return data


def module_relative_path(name: str) -> Path:
    return Path(*name.split(".")).with_suffix(".bob")


_PARSED: dict = {}      # resolved path -> (SHA-256 of the bytes parsed, syntax.Module): each file's latest


def parse_cached(path) -> Module:
    """Parse a module file, reusing the tree while the file holds the same bytes.

    Syntax trees are never modified after parsing, so every Program of this
    process can share them (a build that loads a plan twice parses it once),
    and later processes can too: see parse_stored.  What the file holds decides, never its
    size and mtime: an edit that keeps both (cp -p, rsync -t, tar, two writes in one clock
    tick) is seen by a process's next compile as by a fresh process (probe s35 inprocess
    finding 4).  One tree a file: the memo does not grow with each edit.
    """
    import hashlib

    path = Path(path)
    try:
        data = read_module_bytes(path)
    except OSError:
        return _parse_file(path)        # says what is wrong with the file
    key = str(path.resolve())
    digest = hashlib.sha256(data).digest()
    kept = _PARSED.get(key)
    if kept is not None and kept[0] == digest and kept[1].path == path:
        return kept[1]
    module = parse_stored(path, data)
    _PARSED[key] = (digest, module)
    return module


def _parse_file(path: Path) -> Module:
    from .parse import parse_file       # lark is imported only when something is parsed

    return parse_file(path)


def _parser_identity() -> bytes:
    """What decides a syntax tree besides the text and its path: the grammar, the code that
    builds the tree and the text it is given (this module's parse_stored), the limits parse.py
    enforces (limits.py: a tree stored under a higher NESTING_DEPTH is no answer under a lower
    one; probe s30 cache finding 5), lark's version, Python's (the pickle format)."""
    global _IDENTITY
    if _IDENTITY is None:
        import importlib.util
        import sys

        here = Path(__file__).parent
        parts = [sys.version.encode()]
        for name in PARSER_SOURCES:
            parts.append((here / name).read_bytes())
        spec = importlib.util.find_spec("lark")
        parts.append(_module_bytes(spec))
        _IDENTITY = b"\0".join(parts)
    return _IDENTITY


_IDENTITY: bytes | None = None
# every source a stored tree depends on, relative to this folder (tests/test_cache_keys.py holds
# it to what parse.py imports)
PARSER_SOURCES = ("grammar.lark", "parse.py", "syntax.py", "limits.py", "modules.py", "../errors.py",
                  "../source_bytes.py")


def _module_bytes(spec) -> bytes:
    """lark's own source, from a folder or from a wheel/zip on sys.path (its loader reads it)."""
    if spec is None or not spec.origin:
        return b"no lark"
    try:
        return Path(spec.origin).read_bytes()
    except OSError:
        get_data = getattr(spec.loader, "get_data", None)
        if get_data is None:
            raise
        return get_data(spec.origin)


# the first bytes of a module file judged for text (parse.decode_source): a control byte among them
# (not tab, newlines, form feed) sends the file to parse_file, which says whether it is binary
# data or UTF-16 text, whatever UTF-8 makes of its bytes
from ..source_bytes import JUDGED_BYTES  # noqa: E402  (one constant for both source readers)
_SUSPECT_CONTROL = re.compile(rb"[\x00-\x08\x0e-\x1f\x7f]")


def parse_stored(path: Path, data: bytes | None = None) -> Module:
    """Parse `path` (whose bytes are `data` when the caller read them), or load its tree from
    bobc's user cache (bobc/cache.py), keyed by a hash of the file's bytes, its path (spans name
    it) and the parser's identity: an edit to the file, the grammar or the parser is a new key.
    Loading a stored tree skips importing lark, building the LALR tables and parsing, most of
    `bobc check`'s time (bench/results/profiles)."""
    from .. import cache

    try:
        if data is None:
            data = read_module_bytes(path)
        text = data.decode("utf-8")
    except (OSError, UnicodeDecodeError):
        return _parse_file(path)        # says what is wrong with the file
    if _SUSPECT_CONTROL.search(data, 0, JUDGED_BYTES):
        return _parse_file(path)        # binary data or UTF-16 text, said as such (decode_source)
    from .syntax import Module

    key = cache.digest(_parser_identity(), str(path), data)
    module = cache.load("parsed", key, Module)
    if module is not None:
        return module
    from .parse import parse_module

    # as Path.read_text reads it: universal newlines
    module = parse_module(text.replace("\r\n", "\n").replace("\r", "\n"), path)
    cache.store("parsed", key, module)
    return module


def plan_root(module: Module) -> Path:
    """The folder the plan's module path is relative to (checking they agree)."""
    parts = module.name.split(".")
    path = Path(module.path).resolve()     # `..` and `.` resolved first: a/b/../b/C.bob is b/C.bob
    tail = path.with_suffix("").parts[-len(parts):]
    if list(tail) != parts or path.suffix != ".bob":
        relative = module_relative_path(module.name)
        if _longest_part_bytes(parts) > 255 or len(os.fsencode(relative)) > 4096:
            # no file can have that name: say so (a bounded message), not "rename the file to" a
            # name printed whole -- 300 KB for a 100,000-character name (probe s43 fuzz finding F1)
            raise path_too_long(module.name, relative, module.span)
        raise ModuleError(
            f"module {module.name} is in {shown_path(path)}, but its name says "
            f"{module_relative_path(module.name)}",
            module.span,
            hint=f"rename the file to {module_relative_path(module.name)} "
                 f"or change the module line to match the file's path")
    return path.parents[len(parts) - 1]


def _did_you_mean_module(name: str, search_path, chain=()) -> str:
    """`chain`: the modules importing it, down from the plan; importing one of them would be an
    import cycle, which the language refuses, so none is offered (probe s35 newuser finding 2)."""
    from .suggest import close_modules

    close = close_modules(name, search_path, exclude=set(chain))
    return f"did you mean {' or '.join(close)}? " if close else ""


def _spelled_otherwise(name: str, search_path, chain=()) -> tuple[str, Path] | None:
    """The module on the search path whose name is `name` but for letter case (`Foo.Bar` for an
    import of `foo.bar`: A.B.C is the file A/B/C.bob, and names are case-sensitive), with its
    file, the first an import of that spelling loads; None when there is none (or it is one of
    `chain`, the modules importing it: an import cycle is offered nowhere)."""
    from .suggest import module_files

    wanted = name.casefold()
    for found, file in module_files(search_path):
        if found != name and found.casefold() == wanted and found not in chain:
            return found, file
    return None


class ModuleLoader:
    """Loads a plan and, depth first, everything it imports (each once)."""

    def __init__(self, include=()):
        for folder in include:
            if str(folder) == "":       # Path('') is the current folder: an empty -I is a mistake, not '.'
                raise IncludeFolderError("-I '': an empty folder name",
                                         hint="-I names a folder that holds modules (A/B/C.bob for module A.B.C); "
                                              "write -I . for the current folder")
        self.include = [Path(folder) for folder in include]
        for folder in self.include:
            try:
                is_folder = folder.is_dir()
            except OSError as error:    # a name past 255 bytes, a folder on the way that cannot be searched
                raise IncludeFolderError(f"include folder {folder} cannot be looked up: {error.strerror or error}",
                                  hint="-I names a folder that holds modules (A/B/C.bob for module A.B.C)") from None
            if not is_folder:
                raise IncludeFolderError(f"include folder {folder} is not a folder",
                                  hint="-I names a folder that holds modules (A/B/C.bob for module A.B.C)")
        self.search_path: list[Path] = []
        self.modules: dict[str, Module] = {}
        self.order: list[str] = []          # dependencies before dependents

    def load_plan(self, plan_path) -> Module:
        plan = parse_cached(plan_path)
        root = plan_root(plan)
        self.search_path = [root, *self.include, specs_folder()]
        self._load_imports(plan, [plan.name], {plan.name})
        self.modules[plan.name] = plan
        self.order.append(plan.name)
        return plan

    def _searched(self) -> str:
        return ", ".join(str(folder) for folder in self.search_path)

    def _find(self, name: str, imported=None):
        relative = module_relative_path(name)
        if any(len(part.encode("utf-8")) > 255 for part in relative.parts):
            # refused before any folder is looked in (one where a part's folder is missing says
            # ENOENT, not ENAMETOOLONG)
            raise path_too_long(name, relative, getattr(imported, "span", None))
        for folder in self.search_path:
            candidate = folder / relative
            try:
                if candidate.is_file():     # swallows ENOENT, ENOTDIR, ELOOP; not ENAMETOOLONG
                    return candidate
            except OSError as error:
                if error.errno != errno.ENAMETOOLONG:
                    raise
                raise path_too_long(name, candidate, getattr(imported, "span", None)) from None
        return None

    def _not_a_file(self, name: str):
        """(the path, what is there) for the first search folder with something that is not a
        module file at the module's path (a folder, a broken link, a FIFO), else None."""
        relative = module_relative_path(name)
        for folder in self.search_path:
            what = not_a_file(folder / relative)
            if what is not None:
                return folder / relative, what
        return None

    def _load_imports(self, root: Module, chain: list[str], active: set[str]):
        """Load, depth first, everything `root` imports that is not loaded yet: each module's
        imports in the order written, a module recorded after what it imports.  An explicit
        stack, not a call per import level: an import chain of thousands of modules loads
        (a recursion here once failed every command with a RecursionError at about 1,000
        modules deep; probe s31 limits finding 1)."""
        chain = list(chain)                 # the imports that led here, the root first
        active = set(active)                # the names in chain
        stack = [(root, iter(root.imports))]
        while stack:
            module, imports = stack[-1]
            imported = next(imports, None)
            if imported is None:            # every import of `module` is loaded: record it
                stack.pop()
                if stack:                   # the root is recorded by its caller
                    name = chain.pop()
                    active.discard(name)
                    self.modules[name] = module
                    self.order.append(name)
                continue
            name = imported.module
            if name in active:
                cycle = " -> ".join([*chain[chain.index(name):], name])
                raise ModuleError(f"import cycle: {cycle}", imported.span,
                                  hint="modules may not import each other in a circle; move "
                                       "the shared definitions into a module both import")
            if name in self.modules:
                continue
            loaded = self._load_one(name, imported, chain)
            chain.append(name)
            active.add(name)
            stack.append((loaded, iter(loaded.imports)))

    def _load_one(self, name: str, imported, chain: list[str]) -> Module:
        """The module `imported` names, found and parsed (its imports not yet loaded)."""
        path = self._find(name, imported)
        there = self._not_a_file(name) if path is None else None
        if there is not None:
            raise ModuleError(
                f"module {name}: {shown_path(there[0])} is {there[1]}, not a module file",
                imported.span,
                hint=f"a module is a regular file {module_relative_path(name)} that begins "
                     f"`module {name}`; imported through {' -> '.join([*chain, name])}")
        if path is None:
            spelled = _spelled_otherwise(name, self.search_path, chain)
            if spelled is not None:     # the folder is searched already: -I would not help
                found, file = spelled
                raise ModuleError(
                    f"unknown module {name}: no {module_relative_path(name)} in {self._searched()}",
                    imported.span,
                    hint=f"module names are case-sensitive: {shown_path(file)} is module {found}; write "
                         f"`import {found}` (imported through {' -> '.join([*chain, name])})")
            raise ModuleError(
                f"unknown module {name}: no {module_relative_path(name)} in "
                f"{self._searched()}",
                imported.span,
                hint=_did_you_mean_module(name, self.search_path, chain)
                + f"imported through {' -> '.join([*chain, name])}; add the folder "
                     f"that holds it with -I, or write the module" + _specs_override_note())
        try:
            loaded = parse_cached(path)
        except BobcError as error:      # the file cannot be read or parsed: say who imports it
            through = (f"imported through {' -> '.join([*chain, name])} "
                       f"({imported.span})")
            if error.span is None:      # unreadable, too big: the import is the place to point at
                error.span = imported.span
            from .parse import MissingModuleLine

            if isinstance(error, MissingModuleLine):    # the importer knows the name it must give
                error.hint = f"its first line should be `module {name}`"
            error.hint = f"{error.hint}; {through}" if error.hint else through
            raise
        if loaded.name != name:
            raise ModuleError(
                f"{shown_path(path)} declares module {loaded.name}, but it was imported as {name}",
                loaded.span, hint=f"its first line should be `module {name}`")
        return loaded
