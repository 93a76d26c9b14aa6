"""Work bobc did that nothing used, found timing `bobc check` and `bobc build` (probe s40 buildspeed):
each test counts the work, never the time; the answers stay the same, only the waste goes."""
from __future__ import annotations

import pickle

from bobc import cache, stored


class _Pickled:
    """A value that notes each time it is pickled."""
    count = 0

    def __reduce__(self):
        _Pickled.count += 1
        return (_Pickled, ())


def test_nothing_is_pickled_for_a_cache_that_is_off(monkeypatch, tmp_path):
    """probe s40 buildspeed finding 1: with BOBC_CACHE_DIR=off (docs/cache.md: caching off, nothing
    stored) cache.store and stored's entries still pickled every value -- each parsed module and
    assembled kernel of a cold check -- and threw the bytes away.  Off, nothing is pickled; on,
    the value is stored and loads back as before."""
    monkeypatch.setenv("BOBC_CACHE_DIR", "off")
    _Pickled.count = 0
    cache.store("parsed", "k" * 64, _Pickled())
    stored._keep("plans", "k" * 64, None, _Pickled())     # the program is read only when stored
    assert _Pickled.count == 0, "a cache that is off pickles nothing"

    monkeypatch.setenv("BOBC_CACHE_DIR", str(tmp_path / "cache"))
    cache.store("parsed", "k" * 64, _Pickled())
    assert _Pickled.count == 1
    assert isinstance(cache.load("parsed", "k" * 64, _Pickled), _Pickled)
