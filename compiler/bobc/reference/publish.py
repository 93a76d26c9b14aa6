"""Atomic publication of output files.

The bytes go to a temporary file in the destination's own folder (so the
rename cannot cross file systems), are fsynced, and only then renamed over
the destination; the folder is fsynced so the rename itself survives a crash.
A failure at any point removes the temporary file and leaves whatever was at
the destination before untouched: never a half-written checkpoint.
"""
from __future__ import annotations

import os
from pathlib import Path

from . import safe_io
from .errors import OutputWriteFailure  # noqa: F401  (re-exported for callers)


def publish(path, data: bytes) -> None:
    """Write `data` to `path` atomically, or raise OutputWriteFailure (exit 8).

    The path is checked first as every output is (reference/safe_io.py): a
    symlink, folder, device or FIFO there is refused, never replaced.
    """
    safe_io.publish_file(path, data)


def _create_temporary(folder: Path, name: str) -> tuple[int, str]:
    for attempt in range(100):
        candidate = folder / f".{name}.tmp-{os.getpid()}-{attempt}"
        try:
            return os.open(candidate, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666), str(candidate)
        except FileExistsError:
            continue
    raise FileExistsError(f"no free temporary name for {name} in {folder}")


def _fsync_folder(folder: Path) -> None:
    try:
        fd = os.open(folder, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    except OSError:
        return          # a folder we cannot open for sync: the rename already happened
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)
