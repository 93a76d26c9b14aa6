"""Atomic publication of one output file (the rules are reference/safe_io.py's).

The bytes go to a temporary file in the destination's own folder (so the
rename cannot cross file systems), are fsynced, and only then renamed over
the destination; the folder is fsynced so the rename itself survives a crash.
A failure at any point removes the temporary file and leaves whatever was at
the destination before untouched: never a half-written checkpoint.  A run's
outputs are published together by safe_io.OutputSet.
"""
from __future__ import annotations

import os  # noqa: F401  (tests reach the os calls through this module)

from . import safe_io
from .errors import OutputWriteFailure  # noqa: F401  (re-exported for callers)


def publish(path, data: bytes) -> None:
    """Write `data` to `path` atomically, or raise OutputWriteFailure (exit 8).

    The path is checked first as every output is: a symlink, folder, device or
    FIFO there is refused, never replaced.
    """
    safe_io.publish_file(path, data)
