"""A bounded map for the texts a long-lived process keeps (probe s37 leftovers finding 4).

nvdisasm's texts are kept per code read (bobc.nvidia.decode._TEXTS, bobc.sim.sass_frontend's
cache) so that a code read again is not read again.  Unbounded, a process that lives on (a
library caller, a test run, a server reading many hosts) kept one entry for every distinct code
it ever read.  A BoundedCache keeps the `limit` most recently used entries and drops the least
recently used one past it; a dropped entry is read again when asked for, giving the same text,
so what a caller sees does not depend on the bound, only how often nvdisasm runs."""
from __future__ import annotations

import threading
from collections import OrderedDict


class BoundedCache:
    """A map of at most `limit` entries, least recently used dropped first.  Its reads (get,
    [key]) and writes mark an entry used; `in` does not.  Safe to share between threads (the
    nvdisasm readings of bobc.nvidia.decode._read_together fill it from a pool)."""

    def __init__(self, limit: int):
        if limit < 1:
            raise ValueError("a BoundedCache holds at least one entry")
        self.limit = limit
        self._entries: OrderedDict = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key, default=None):
        with self._lock:
            if key not in self._entries:
                return default
            self._entries.move_to_end(key)
            return self._entries[key]

    def __getitem__(self, key):
        with self._lock:
            value = self._entries[key]
            self._entries.move_to_end(key)
            return value

    def __setitem__(self, key, value) -> None:
        with self._lock:
            self._entries[key] = value
            self._entries.move_to_end(key)
            while len(self._entries) > self.limit:
                self._entries.popitem(last=False)

    def __contains__(self, key) -> bool:
        with self._lock:
            return key in self._entries

    def __len__(self) -> int:
        with self._lock:
            return len(self._entries)

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()
