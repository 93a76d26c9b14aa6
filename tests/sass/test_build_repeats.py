"""Work a build repeats for every launch, image encode or value, done once per process
(probe s35 buildspeed): the answers stay the same, only the repetition goes."""
from __future__ import annotations

import pytest

from bobc.sass import cubin, encoder
from bobc.sass.assembler import assemble


def _code(barrier: int, arch: str) -> bytes:
    return bytes(assemble(f"BAR.SYNC.DEFER_BLOCKING {barrier:#x} ;\nEXIT ;\n", arch).code)


class _Counted(bytes):
    """Code that counts the slices taken of it: one scan of its words takes one slice a word."""
    slices = 0

    def __getitem__(self, key):
        _Counted.slices += 1
        return bytes.__getitem__(self, key)


@pytest.mark.parametrize("arch", ["sm_86", "sm_90"])
def test_a_regions_barrier_count_is_found_once_however_often_its_launches_ask(monkeypatch, arch):
    """probe s35 buildspeed finding 1: each of a plan's launches asks its region's barrier count
    (nvidia/encode.py qmd_barriers) and a build encodes its images four times; the BAR forms of
    the target were gathered from its whole encoding table, and the code scanned, every time
    (Bob: 108 times a build, 16 % of a warm build's profile)."""
    five, two = _code(5, arch), _code(2, arch)
    gathered = []
    real = encoder.forms_for
    monkeypatch.setattr(encoder, "forms_for", lambda a: gathered.append(a) or real(a))
    _Counted.slices = 0
    words = len(five) // 16
    for _ in range(27):
        assert cubin.code_barrier_count(_Counted(five), arch) == 6
    assert len(gathered) <= 1, "the target's BAR forms are gathered once"
    assert _Counted.slices <= words, "one region's code is scanned at most once"
    # other code is its own answer, not the one kept for the first
    assert cubin.code_barrier_count(two, arch) == 3
    assert cubin.code_barrier_count(b"", arch) == 0
