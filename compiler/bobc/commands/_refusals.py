"""Exit codes shared by the subcommands (README, "What a user is promised"): bobc's 2 is a
command line that is wrong -- an option's value, a path that names no file of the kind asked
(nothing there, a folder, a FIFO, a device, a broken link) -- and 1 a file that is there but
that bobc refuses: unreadable, empty, too big, not bobc's, damaged (probe s30 cli finding 7).
`bobc diff`'s 1 is "they differ": it says 2, "cannot compare", for both."""
from __future__ import annotations

from contextlib import contextmanager

FILE_REFUSED = 1


@contextmanager
def refused_files():
    """Around the reading and decoding of input files a command has already found to be there
    and of the right kind: any refusal in it is a file refused (exit 1), whatever the reader
    called it (nvidia.decode's readers say UsageError, exit 2, for a file that is not bobc's)."""
    from ..errors import BobcError

    try:
        yield
    except BobcError as error:
        if error.exit_code == 2:
            error.exit_code = FILE_REFUSED
        raise
