"""Where a kernel's assembly source is: `<identity>.sass` in the first folder of a search
path (each searched recursively) that has it.

Its own module so that finding a source imports nothing of the certifier: a warm `bobc
check` only confirms its contract sources are still the files it certified (recall.py).
"""
from __future__ import annotations

from pathlib import Path


def find_source(identity: str, folders) -> Path | None:
    """`<identity>.sass` in the first folder (searched recursively) that has it."""
    for folder in folders:
        hits = sorted(Path(folder).rglob(f"{identity}.sass"))
        if hits:
            return hits[0]
    return None
