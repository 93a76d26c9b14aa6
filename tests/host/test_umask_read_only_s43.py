"""Reading the umask never sets it (probe s43 buildearly finding 2).

gcc.gcc_umask and cache.current_umask read the process's umask the one way os offers, by setting
another (os.umask) and setting it back.  Two threads doing that at once -- `bobc build` runs the C
runtime's compile in a thread of its own while the main thread evaluates the plan -- can interleave
as A sets 022 (reads the user's U), B sets 0 (reads A's 022), A sets U back, B sets 022 "back": the
process keeps 022 (or 0) for good, and every later file gets the wrong mode.  Now both read
/proc/self/status's `Umask:` line (proc(5)), which changes nothing.

The expected values are the mask this test sets with os.umask itself, and the rule "no call sets
it" is counted by wrapping os.umask: an independent reason, not bobc's own output."""
from __future__ import annotations

import os
import threading
from pathlib import Path

import pytest

from bobc import cache
from bobc.host import gcc


@pytest.fixture
def mask_027():
    previous = os.umask(0o027)
    try:
        yield 0o027
    finally:
        os.umask(previous)


@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="needs Linux's /proc")
def test_the_umask_is_read_without_being_set(mask_027, monkeypatch):
    calls = []
    real = os.umask

    def counted(mask):
        calls.append(mask)
        return real(mask)

    monkeypatch.setattr(os, "umask", counted)
    assert cache.current_umask() == mask_027
    assert gcc.gcc_umask() == mask_027 & 0o077
    assert calls == [], f"os.umask was set to {calls} to read it"


def test_threads_reading_the_umask_leave_it_as_it_was(mask_027):
    """Many threads reading at once: the process's mask is the one set before, after all of them."""
    seen = []

    def read():
        for _ in range(2000):
            seen.append(gcc.gcc_umask())
            seen.append(cache.current_umask())

    threads = [threading.Thread(target=read) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    after = os.umask(mask_027)
    assert after == mask_027
    assert set(seen) == {mask_027, mask_027 & 0o077}
