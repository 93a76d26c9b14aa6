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


def close_modules(name: str, search_path, exclude=frozenset()) -> list[str]:
    return difflib.get_close_matches(name, [found for found in module_names(search_path)
                                            if found not in exclude], n=3, cutoff=0.6)


def modules_declaring(name: str, search_path, keyword: str = "def") -> list[tuple[str, Path]]:
    """The module files on the search path with a top-level `def NAME` (or `family NAME`), as
    (module name, file), in search path order; a shadowed file is listed too."""
    # the name ends where a name cannot go on (docs/language.md: letters, digits, `_`, `'`, and a
    # `-` between runs): `\b` took `def nat-thing` and `def succ'` for `nat` and `succ`
    pattern = re.compile(rf"^{keyword}\s+{re.escape(name)}(?![A-Za-z0-9_'])(?!-[A-Za-z0-9_'])",
                         re.MULTILINE)
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
MAX_EDITS = 33                  # the most edits a close name may be away: a third of the name's
                                # letters, up to this (a third of RATIO_LENGTH)
RATIO_LENGTH = 100              # difflib's ratio (quadratic in the length) is weighed only for
                                # names up to this long
MAX_CELLS = 2_000_000           # edit-distance cells one did-you-mean may compute (about 1 s);
                                # past it the names not yet weighed are not (probe s31 limits
                                # finding 2: a 30,000-character unknown name ran for minutes)
SHOWN_NAME = 60                 # a longer name is shown as its first SHOWN_NAME characters


def shown_name(name: str) -> str:
    """`name` as a message shows it: whole up to SHOWN_NAME characters, else its beginning and
    its length, so one error stays a few lines whatever the name (docs/limits.md); a control
    character in it (a name given to `bobc eval`: a tab, a newline) as '?', as a path's is
    (errors.printable), so that the message stays one line (probe s37 sourcetext finding 7)."""
    from ..errors import printable

    if len(name) <= SHOWN_NAME:
        return printable(name)
    return f"{printable(name[:SHOWN_NAME])}...({len(name):,} characters)"


def _distance(a: str, b: str, limit: int) -> tuple[int, int]:
    """(edit distance (insert, delete, substitute one character), or limit + 1 past `limit`;
    the cells computed).  Only the band of cells within `limit` of the diagonal is computed:
    at most len(a) * (2 limit + 1) cells, whatever len(b)."""
    if abs(len(a) - len(b)) > limit:
        return limit + 1, 0
    over = limit + 1
    cells = 0
    # previous[j] for j in lo..hi of row i - 1; cells outside the band count as over the limit
    previous = {j: j for j in range(0, min(len(b), limit) + 1)}
    for i, x in enumerate(a, 1):
        lo, hi = max(0, i - limit), min(len(b), i + limit)
        current = {}
        best = over
        for j in range(lo, hi + 1):
            if j == 0:
                value = i
            else:
                value = min(previous.get(j, over) + 1, current.get(j - 1, over) + 1,
                            previous.get(j - 1, over) + (x != b[j - 1]))
            value = min(value, over)
            current[j] = value
            best = min(best, value)
        cells += hi - lo + 1
        if best > limit:
            return over, cells
        previous = current
    return previous.get(len(b), over), cells


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
    is close when difflib finds it so (ratio 0.6; names up to RATIO_LENGTH only) or when it is at
    most a third of its letters (at least one, at most MAX_EDITS) away.

    Bounded whatever the lengths: a candidate whose length differs by more than the edit bound
    is never close by edits (nor, past RATIO_LENGTH, by ratio) and is not weighed; the edit
    distance computes only a band MAX_EDITS either side of the diagonal, and one call at most
    MAX_CELLS cells."""
    spellings = _spellings(name)
    limit = max(1, min(len(name) // 3, MAX_EDITS))
    by_ratio = len(name) <= RATIO_LENGTH
    budget = MAX_CELLS
    ranked = []
    for candidate in dict.fromkeys(list(candidates)[:MAX_CANDIDATES]):
        if candidate == name:
            continue
        if not by_ratio and abs(len(candidate) - len(name)) > limit:
            continue
        lowered = candidate.lower()
        edits = limit + 1
        for spelling in spellings:
            if abs(len(spelling) - len(lowered)) > limit:
                continue
            if len(spelling) * (2 * limit + 1) > budget:
                budget = 0
                break
            distance, cells = _distance(spelling, lowered, limit)
            budget -= cells
            edits = min(edits, distance)
        ratio = 0.0
        if by_ratio:
            matcher = difflib.SequenceMatcher(None, name, candidate)
            if matcher.real_quick_ratio() >= 0.6 and matcher.quick_ratio() >= 0.6:
                ratio = matcher.ratio()
        if edits > limit and ratio < 0.6:
            if budget <= 0:
                break
            continue
        ranked.append((edits, -_common_prefix(name, candidate),
                       -_common_prefix(spellings[0], lowered), -ratio, candidate))
        if budget <= 0:
            break
    ranked.sort()
    return [item[-1] for item in ranked[:n]]
