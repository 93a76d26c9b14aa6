"""Assembled kernels kept in bobc's user cache (bobc/cache.py) between builds.

Assembling a plan's kernels was most of what extracting the plan cost (issue 21,
bench/results/profiles).  An assembled kernel depends only on its source's bytes
and path (spans in the result name it), the target, and the assembler itself, so
the key hashes those: every file of the assembler package (code and encoding
tables), and the modules it imports from bobc (targets, errors).  A refused
source raises every time: only successes are stored.
"""
from __future__ import annotations

import contextlib
import contextvars
import hashlib
from pathlib import Path

from . import cache

_PACKAGE = Path(__file__).resolve().parent
_IDENTITY: bytes | None = None
ABSENT = "absent"       # a candidate looked for and not found (a per-target variant; bobc.kernel_search)

# A record of the kernel sources read: target name -> kernel source path -> SHA-256 of the bytes
# assembled for it, or ABSENT.  Each compile keeps its own (never one for the whole process: a
# result stored by a process's second compile listed every source its first read, so an edit to
# a kernel the second plan never reads made its results misses).  The records open now, innermost
# last, in this thread's context: a read is noted in every one of them (`recording`).
_OPEN: contextvars.ContextVar[tuple] = contextvars.ContextVar("bobc_kernel_sources_read", default=())


def _target_name(target) -> str:
    return getattr(target, "name", str(target))


@contextlib.contextmanager
def recording(record: dict | None = None):
    """`with recording(record):` every kernel source read or looked for meanwhile (in this thread,
    and in the threads started with its context) is noted in `record` (a fresh one when None) as
    well as in the records open around it; yields the record."""
    record = {} if record is None else record
    token = _OPEN.set(_OPEN.get() + (record,))
    try:
        yield record
    finally:
        _OPEN.reset(token)


def program_record(program) -> dict:
    """The record of the kernel sources evaluating `program` read (bobc.plan.intrinsics notes its
    encoders' reads there): what a result computed from the program is stored with (bobc.stored)."""
    record = getattr(program, "bobc_sources_read", None)
    if record is None:
        record = {}
        try:
            program.bobc_sources_read = record
        except AttributeError:
            pass
    return record


def sources_read(target, record: dict | None = None) -> list[list[str]]:
    """[path, sha256] of every kernel source assembled (or taken from the cache) for `target`, and
    [path, ABSENT] of each source looked for and not found (a variant that does not exist yet),
    as `record` holds them (program_record's), else as the records open now do (`recording`; none
    open: nothing): what a result computed from them must be checked against before it is reused
    (bobc.stored).  Per target: a compile for sm_86 and sm_90 keeps the sm_86 results independent
    of sm_90's variants."""
    records = (record,) if record is not None else _OPEN.get()
    found: dict[str, str] = {}
    for each in records:
        for path, digest in each.get(_target_name(target), {}).items():
            if found.get(path, ABSENT) == ABSENT:
                found[path] = digest
    return [[path, digest] for path, digest in sorted(found.items())]


def _note(name: str, path: str, digest: str) -> None:
    """Note that `path` was read (its SHA-256) or looked for and absent (ABSENT, which never
    replaces a read) for target `name`, in every open record."""
    for record in _OPEN.get():
        read = record.setdefault(name, {})
        if digest == ABSENT:
            read.setdefault(path, ABSENT)
        else:
            read[path] = digest


def note_absent(paths, target) -> None:
    """Record that these kernel sources were looked for for `target` and did not exist (so one
    that appears later, such as a new `x.sm_90.sass` beside `x.sass`, makes a kept result a miss)."""
    for path in paths:
        _note(_target_name(target), str(path), ABSENT)


# A listing entry's tag for a kernel search's answer: [SEARCHED, target name, identity, folders,
# the file found (absolute) or ABSENT].  Evaluating a plan asks the recursive search which file it
# finds for each kernel it encodes (bobc.plan.intrinsics _same_as_search: a copy found first is refused), and a
# file added under any folder of the search may change that answer -- a backup copy, a variant in
# another subfolder -- so a result kept with it holds only while the search still answers the same
# (bobc.stored; probe s45 determinism3 finding 1).
SEARCHED = "searched"


def note_search(identity: str, folders, target, found) -> None:
    """Note that the kernel search (bobc.kernel_search.find_source) of `identity` in `folders` for
    `target` found `found` (None: nothing), in every open record."""
    import os

    folders = tuple(os.path.abspath(folder) for folder in folders)
    answer = os.path.abspath(found) if found is not None else ABSENT
    for record in _OPEN.get():
        record.setdefault((SEARCHED, _target_name(target)), {})[(identity, folders)] = answer


def searches_read(target, record: dict | None = None) -> list[list]:
    """[SEARCHED, target name, identity, [folder, ...], the file found or ABSENT] of every kernel
    search noted for `target` (note_search), as `record` holds them, else as the records open now do: what a
    result computed from them must find again before it is reused (bobc.stored)."""
    name = _target_name(target)
    records = (record,) if record is not None else _OPEN.get()
    found: dict = {}
    for each in records:
        found.update(each.get((SEARCHED, name), {}))
    return [[SEARCHED, name, identity, list(folders), answer]
            for (identity, folders), answer in sorted(found.items())]


def search_holds(entry) -> bool:
    """Whether the kernel search noted as `entry` (searches_read's form) finds the same file now;
    a search refused now (two copies under one folder) does not hold."""
    import os

    from .errors import BobcError
    from .kernel_search import find_source

    _tag, target, identity, folders, answer = entry
    try:
        found = find_source(identity, [Path(folder) for folder in folders], target)
    except (BobcError, OSError):
        return False
    return (os.path.abspath(found) if found is not None else ABSENT) == answer


def _assembler_identity() -> bytes:
    global _IDENTITY
    if _IDENTITY is None:
        import sys

        files = sorted(p for p in (_PACKAGE / "sass").rglob("*") if p.is_file() and p.suffix in (".py", ".json"))
        files += [_PACKAGE / "targets.py", _PACKAGE / "errors.py", _PACKAGE / "nvtools.py"]
        parts = [sys.version.encode()]
        for path in files:
            parts += [str(path.relative_to(_PACKAGE)).encode(), path.read_bytes()]
        _IDENTITY = cache.digest(*parts).encode()
    return _IDENTITY


def assemble_kernel(source_path, target, launched: bool = True):
    """bobc.sass.assemble_kernel(source_path, target, launched=launched) -- by default a plan's
    kernel, opening with the target's launch prologue -- from the cache when it has assembled
    this source for this target with this assembler before."""
    from .sass import assemble_kernel as assemble
    from .sass.assembler import Assembled
    from .sass.source import read_source_bytes

    path = Path(source_path)
    name = _target_name(target)
    for _ in range(5):
        data = read_source_bytes(path)    # the assembler's bounded reader: refused by name, unread, past 4 MiB
        _note(name, str(path), hashlib.sha256(data).hexdigest())
        key = cache.digest(_assembler_identity(), str(path), name, data, "launched" if launched else "as written")
        assembled = cache.load("kernels", key, Assembled)
        if assembled is not None:
            return assembled
        assembled = assemble(path, target, launched=launched)     # reads the source again
        if read_source_bytes(path) == data:
            cache.store("kernels", key, assembled)
            return assembled
        # the source was edited while it was assembled: the code may be the new bytes', which is no
        # entry for the old bytes' key, nor what the SHA-256 recorded above says was read (a later
        # build of the old bytes would get the new code: probe s34 cache34 finding 5); again
    from .errors import BobcError, shown

    raise BobcError(f"kernel source {shown(path)} changed while it was being assembled, 5 times over",
                    hint="run again once nothing is writing it")
