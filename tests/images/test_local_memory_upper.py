"""SET_SHADER_LOCAL_MEMORY_A's ADDRESS_UPPER is 16:0 in AMPERE_COMPUTE_B (open-gpu-doc clc7c0.h)
and 24:0 in HOPPER_COMPUTE_A (clcbc0.h): the prologue's local memory backing must fit the bound
class's width, or the sm_86 host would take another address (probe s33 qmdaudit, finding 8b).
Our backing is at 0 (no local memory), which fits both; one at 2^49 fits only Hopper's."""
from __future__ import annotations

import pytest

from bobc.errors import BobcError
from bobc.nvidia import encode
from bobc.nvidia import pushbuffer as pb
from bobc.targets import SM86, SM90, TARGETS

UPPER_BITS = {0xC7C0: 17, 0xCBC0: 25}      # clc7c0.h 16:0, clcbc0.h 24:0


def _local_memory_a(target) -> int:
    words = encode.prologue(target).dwords
    header = next(i for i, w in enumerate(words) if w & 0xFFF == pb.COMPUTE["SET_SHADER_LOCAL_MEMORY_A"] >> 2)
    return words[header + 1]


def test_every_targets_class_has_its_width():
    for target in TARGETS.values():
        assert pb.UPPER_FIELD_BITS[("SET_SHADER_LOCAL_MEMORY_A", target.compute_class)] == UPPER_BITS[target.compute_class]


def test_the_shipped_backing_fits_both():
    assert encode.LOCAL_MEMORY_BASE >> 32 < 1 << 17
    assert _local_memory_a(SM86) == _local_memory_a(SM90) == encode.LOCAL_MEMORY_BASE >> 32


def test_a_backing_past_amperes_width_is_refused_for_sm_86_only(monkeypatch):
    monkeypatch.setattr(encode, "LOCAL_MEMORY_BASE", 1 << 49)
    assert _local_memory_a(SM90) == 1 << 17
    with pytest.raises(BobcError, match=r"SET_SHADER_LOCAL_MEMORY_A's address bits 32 and up are 0x20000, "
                                        r"but AMPERE_COMPUTE_B takes 17 bits \(16:0\)"):
        encode.prologue(SM86)
