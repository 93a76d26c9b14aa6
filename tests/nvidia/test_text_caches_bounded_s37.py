"""Probe s37 leftovers, finding 4: nvdisasm's texts kept in a process are bounded.

bobc.nvidia.decode._TEXTS (`bobc dump`, `bobc diff`) and bobc.sim.sass_frontend's cache (`bobc sim`)
kept one entry per distinct code a process read, for its whole life: a process that lives on (a
library caller, a long test run) grew with every code.  Each now keeps its TEXTS_KEPT most
recently used codes, the least recently used dropped first, and a dropped code is read again by
nvdisasm when asked for: the texts are the same as with no bound."""
from __future__ import annotations

import pytest

from bobc import nvtools
from bobc.bounded import BoundedCache
from bobc.nvidia import decode
from bobc.sass.oracle import nop_word
from bobc.sim import sass_frontend

needs_nvdisasm = pytest.mark.skipif(nvtools.nvdisasm() is None, reason="nvdisasm not installed")


def test_a_bounded_cache_drops_the_least_recently_used():
    kept = BoundedCache(2)
    kept["a"], kept["b"] = 1, 2
    assert kept.get("a") == 1              # a used: b is now the least recently used
    kept["c"] = 3
    assert "b" not in kept and len(kept) == 2          # kept: a, then c
    assert "a" in kept                     # `in` marks nothing used: a stays the older one
    kept["d"] = 4
    assert "a" not in kept and kept["c"] == 3 and kept["d"] == 4
    with pytest.raises(ValueError):
        BoundedCache(0)


@pytest.mark.parametrize("module, name", [(decode, "_TEXTS"), (sass_frontend, "_cache")])
def test_the_process_caches_hold_at_most_their_documented_size(module, name):
    cache = getattr(module, name)
    assert module.TEXTS_KEPT >= 1
    try:
        for i in range(module.TEXTS_KEPT + 10):
            cache[("sm_86", i.to_bytes(16, "little"))] = {}
        assert len(cache) == module.TEXTS_KEPT
        assert ("sm_86", (9).to_bytes(16, "little")) not in cache           # the oldest went first
        assert ("sm_86", (module.TEXTS_KEPT + 9).to_bytes(16, "little")) in cache
    finally:
        cache.clear()


def _codes(arch, count):
    return [nop_word(arch) * (k + 1) for k in range(count)]       # distinct streams: 1, 2, 3 ... NOPs


@needs_nvdisasm
def test_decode_texts_past_the_bound_are_the_same(monkeypatch):
    arch = "SM86"
    monkeypatch.setattr(decode, "_TEXTS", {})
    unbounded = [decode._instruction_text(code, arch) for code in _codes(arch, 3)]
    monkeypatch.setattr(decode, "_TEXTS", BoundedCache(2))
    monkeypatch.setattr(decode, "_TEXTS_TOOL", None)
    first = [decode._instruction_text(code, arch) for code in _codes(arch, 3)]
    assert len(decode._TEXTS) == 2
    again = decode._instruction_text(_codes(arch, 1)[0], arch)          # dropped: read again
    assert first == unbounded and again == unbounded[0]


@needs_nvdisasm
def test_sim_texts_past_the_bound_are_the_same(monkeypatch):
    arch = "SM86"
    monkeypatch.setattr(sass_frontend, "_cache", {})
    unbounded = [sass_frontend.disassembly_text(code, arch) for code in _codes(arch, 3)]
    monkeypatch.setattr(sass_frontend, "_cache", BoundedCache(2))
    first = [sass_frontend.disassembly_text(code, arch) for code in _codes(arch, 3)]
    assert len(sass_frontend._cache) == 2
    assert first == unbounded and sass_frontend.disassembly_text(_codes(arch, 1)[0], arch) == unbounded[0]
