"""Suggestions for names a plan cannot reach: the module it may have meant, and the import
that would bring a definition or family it names.

Looked up in the files of the module search path (the plan's root, -I folders,
specs/), not only the modules already loaded, since the module a user forgot
to import is by definition not loaded.  A plain text scan of `def NAME` /
`family NAME` lines: a hint, never a decision.
"""
from __future__ import annotations

import difflib
import re
from pathlib import Path


def module_names(search_path) -> list[str]:
    """Every module the search path holds (A/B/C.bob -> A.B.C)."""
    names = []
    for folder in search_path:
        folder = Path(folder)
        if folder.is_dir():
            names += [".".join(p.relative_to(folder).with_suffix("").parts) for p in sorted(folder.rglob("*.bob"))]
    return list(dict.fromkeys(names))


def close_modules(name: str, search_path) -> list[str]:
    return difflib.get_close_matches(name, module_names(search_path), n=3, cutoff=0.6)


def modules_declaring(name: str, search_path, keyword: str = "def") -> list[str]:
    """The modules on the search path with a top-level `def NAME` (or `family NAME`)."""
    pattern = re.compile(rf"^{keyword}\s+{re.escape(name)}\b", re.MULTILINE)
    found = []
    for folder in search_path:
        folder = Path(folder)
        if not folder.is_dir():
            continue
        for path in sorted(folder.rglob("*.bob")):
            try:
                text = path.read_text(encoding="utf-8", errors="replace")
            except OSError:
                continue
            if pattern.search(text):
                found.append(".".join(path.relative_to(folder).with_suffix("").parts))
    return list(dict.fromkeys(found))
