"""Assembled kernels kept in bobc's user cache (bobc/cache.py) between builds.

Assembling a plan's kernels was most of what extracting the plan cost (issue 21,
bench/results/profiles).  An assembled kernel depends only on its source's bytes
and path (spans in the result name it), the target, and the assembler itself, so
the key hashes those: every file of the assembler package (code and encoding
tables), and the modules it imports from bobc (targets, errors).  A refused
source raises every time: only successes are stored.
"""
from __future__ import annotations

import hashlib
from pathlib import Path

from . import cache

_PACKAGE = Path(__file__).resolve().parent
_IDENTITY: bytes | None = None
_SOURCES_READ: dict[str, str] = {}      # kernel source path -> SHA-256 of the bytes assembled


def sources_read() -> list[list[str]]:
    """[path, sha256] of every kernel source this process assembled (or took from the cache):
    what a result computed from them must be checked against before it is reused."""
    return [[path, digest] for path, digest in sorted(_SOURCES_READ.items())]


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


def assemble_kernel(source_path, target):
    """bobc.sass.assemble_kernel(source_path, target), from the cache when it has assembled
    this source for this target with this assembler before."""
    from .sass import assemble_kernel as assemble
    from .sass.assembler import Assembled

    path = Path(source_path)
    try:
        data = path.read_bytes()
    except OSError:
        return assemble(path, target)           # says what is wrong with the file
    _SOURCES_READ[str(path)] = hashlib.sha256(data).hexdigest()
    name = getattr(target, "name", str(target))
    key = cache.digest(_assembler_identity(), str(path), name, data)
    assembled = cache.load("kernels", key, Assembled)
    if assembled is not None:
        return assembled
    assembled = assemble(path, target)
    cache.store("kernels", key, assembled)
    return assembled
