"""A resident or window of no bytes is refused as empty (bobc.certify.residents: "non-empty").
Session 47 mutants13: residents.py refusing only a negative size passed every residents test,
which tried negative sizes and none of 0 -- a 0-byte resident shares no byte with anything
(overlaps_found skips it), so nothing else would refuse a resident the plan forgot to size."""
from __future__ import annotations

from types import SimpleNamespace

from bobc.certify.residents import check_residents
from bobc.plan.model import DeviceArena, Resident

WINDOW = Resident("w", 0x1000, 0x1000, 256)       # [0x1000, 0x2000)


def found(windows, residents):
    return [(f.kind, f.message) for f in check_residents(
        SimpleNamespace(arena=DeviceArena(tuple(windows), tuple(residents), ())))]


def test_a_resident_of_no_bytes_is_empty_and_one_of_a_byte_is_not_s47():
    assert found([WINDOW], [Resident("z", 0x1100, 0, 1)]) == [
        ("empty", "resident z at 0x1100 has no bytes (0)")]
    assert found([WINDOW], [Resident("z", 0x1100, 1, 1)]) == []


def test_a_window_of_no_bytes_is_empty_s47():
    assert ("empty", "window v at 0x3000 has no bytes (0)") in found([WINDOW, Resident("v", 0x3000, 0, 1)], [])
