"""Suggestions for names a plan cannot reach: the module it may have meant, and the import
that would bring a definition or family it names.

Looked up in the files of the module search path (the plan's root, -I folders,
specs/), not only the modules already loaded, since the module a user forgot
to import is by definition not loaded.  A plain text scan of `def NAME` /
`family NAME` lines: a hint, never a decision.

So the scan is bounded, whatever the search path holds (a plan's root may be a
home folder, or `/`): a folder that is a filesystem's root is not scanned; only
folders and files whose names could be part of a module path are visited,
symbolic links to folders are not followed, at most MAX_FOLDERS folders and
MAX_FILES module files per search folder, MAX_DEPTH folders deep, within
SECONDS in all; only regular files are opened (never blocking: a FIFO or a
device named X.bob is skipped), only the first MAX_FILE_BYTES of one and
MAX_BYTES in all are read.  Past a bound the hint is made from what was seen.
"""
from __future__ import annotations

import difflib
import os
import re
import stat
import time
from collections import deque
from pathlib import Path

MAX_FOLDERS = 2_000
MAX_FILES = 4_000
MAX_DEPTH = 16
MAX_FILE_BYTES = 1 << 22
MAX_BYTES = 1 << 26             # read in all, by one search
SECONDS = 2.0

# a module path's part (grammar.lark NAME): other folders cannot hold a module
_PART = re.compile(r"[A-Za-z_][A-Za-z0-9_']*(?:-[A-Za-z0-9_']+)*\Z")


def _is_filesystem_root(folder: Path) -> bool:
    try:
        resolved = folder.resolve()
    except (OSError, RuntimeError):
        return True
    return resolved == Path(resolved.anchor)


def module_files(search_path, deadline: float | None = None) -> list[tuple[str, Path]]:
    """(module name, file) for every regular A/B/C.bob on the search path, in search path order
    (a name may come more than once: the first one is what an import loads), bounded."""
    if deadline is None:
        deadline = time.monotonic() + SECONDS
    found = []
    for folder in search_path:
        folder = Path(folder)
        if not folder.is_dir() or _is_filesystem_root(folder):
            continue
        found += _walk(folder, deadline)
    return found


def _walk(root: Path, deadline: float) -> list[tuple[str, Path]]:
    found = []
    folders = 0
    queue = deque([(root, ())])     # breadth first: shallow modules are seen first
    while queue and folders < MAX_FOLDERS and len(found) < MAX_FILES:
        if time.monotonic() > deadline:
            break
        folder, parts = queue.popleft()
        folders += 1
        try:
            with os.scandir(folder) as listing:
                entries = sorted(listing, key=lambda e: e.name)
        except OSError:
            continue
        for entry in entries:
            name = entry.name
            try:
                if name.endswith(".bob") and _PART.match(name[:-4]):
                    if stat.S_ISREG(os.stat(entry.path).st_mode):   # follows a link to a file
                        found.append((".".join((*parts, name[:-4])), Path(entry.path)))
                elif len(parts) < MAX_DEPTH and _PART.match(name) \
                        and entry.is_dir(follow_symlinks=False):
                    queue.append((Path(entry.path), (*parts, name)))
            except OSError:
                continue
    return found


def read_head(path: Path) -> str:
    """The first MAX_FILE_BYTES of a regular file as text ('' for anything else): opened without
    blocking, so a FIFO put where the scan saw a file cannot hang it."""
    try:
        descriptor = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0)
                             | getattr(os, "O_NOCTTY", 0))
    except OSError:
        return ""
    try:
        if not stat.S_ISREG(os.fstat(descriptor).st_mode):
            return ""
        with os.fdopen(descriptor, "rb", closefd=False) as stream:
            data = stream.read(MAX_FILE_BYTES)
    except OSError:
        return ""
    finally:
        os.close(descriptor)
    return data.decode("utf-8", errors="replace")


def module_names(search_path) -> list[str]:
    """Every module the search path holds (A/B/C.bob -> A.B.C), as far as the bounded scan goes."""
    return list(dict.fromkeys(name for name, _ in module_files(search_path)))


def close_modules(name: str, search_path) -> list[str]:
    return difflib.get_close_matches(name, module_names(search_path), n=3, cutoff=0.6)


def modules_declaring(name: str, search_path, keyword: str = "def") -> list[tuple[str, Path]]:
    """The module files on the search path with a top-level `def NAME` (or `family NAME`), as
    (module name, file), in search path order; a shadowed file is listed too."""
    pattern = re.compile(rf"^{keyword}\s+{re.escape(name)}\b", re.MULTILINE)
    deadline = time.monotonic() + SECONDS
    found = []
    budget = MAX_BYTES
    for module, path in module_files(search_path, deadline):
        if budget <= 0 or time.monotonic() > deadline:
            break
        text = read_head(path)
        budget -= len(text)
        if pattern.search(text):
            found.append((module, path))
    return found


MAX_CANDIDATES = 20_000         # names weighed for one did-you-mean (a plan's scope is larger
                                # only in a generated plan; past it the first ones are weighed)


def _distance(a: str, b: str, limit: int) -> int:
    """Edit distance (insert, delete, substitute one character), or limit + 1 past `limit`."""
    if abs(len(a) - len(b)) > limit:
        return limit + 1
    previous = list(range(len(b) + 1))
    for i, x in enumerate(a, 1):
        current = [i]
        for j, y in enumerate(b, 1):
            current.append(min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (x != y)))
        if min(current) > limit:
            return limit + 1
        previous = current
    return previous[-1]


def _common_prefix(a: str, b: str) -> int:
    count = 0
    for x, y in zip(a, b):
        if x != y:
            break
        count += 1
    return count


# words other languages use for a primitive's operation (nat-plus -> nat-add)
SYNONYMS = {"plus": "add", "sum": "add", "minus": "subtract", "sub": "subtract",
            "times": "multiply", "mul": "multiply", "mult": "multiply", "div": "divide",
            "mod": "modulo", "rem": "modulo", "pow": "power", "exp": "power",
            "sqrt": "square-root", "eq": "equal", "equals": "equal", "lt": "less",
            "and": "bit-and", "or": "bit-or", "xor": "bit-xor", "shl": "shift-left",
            "shr": "shift-right", "concat": "append", "len": "length", "size": "length"}


def _spellings(name: str) -> list[str]:
    """`name` in lower case, and with a word after a hyphen put as the language says it."""
    lowered = name.lower()
    head, dash, word = lowered.rpartition("-")
    if dash and word in SYNONYMS:
        return [lowered, f"{head}-{SYNONYMS[word]}"]
    return [lowered]


def closest(name: str, candidates, n: int = 3) -> list[str]:
    """The candidates closest to `name`, closest first: fewest edits ignoring case (a word
    another language uses for an operation, `plus`, counts as the language's own, `add`), then
    the longest common beginning (with case, then without), then difflib's ratio.  A candidate
    is close when difflib finds it so (ratio 0.6) or when it is at most a third of its letters
    (at least one) away."""
    spellings = _spellings(name)
    limit = max(1, len(name) // 3)
    ranked = []
    for candidate in dict.fromkeys(list(candidates)[:MAX_CANDIDATES]):
        if candidate == name:
            continue
        lowered = candidate.lower()
        edits = min(_distance(spelling, lowered, limit) for spelling in spellings)
        matcher = difflib.SequenceMatcher(None, name, candidate)
        ratio = matcher.ratio() if matcher.real_quick_ratio() >= 0.6 \
            and matcher.quick_ratio() >= 0.6 else 0.0
        if edits > limit and ratio < 0.6:
            continue
        ranked.append((edits, -_common_prefix(name, candidate),
                       -_common_prefix(spellings[0], lowered), -ratio, candidate))
    ranked.sort()
    return [item[-1] for item in ranked[:n]]
