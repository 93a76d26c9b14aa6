"""Edges of the residents check (compiler/bobc/certify/residents.py) that manual mutation testing
(session 39, notes/s39/probe-mutants.md) found untested: a resident one byte over either end of its
window, windows that overlap each other, a phase naming a resident at the right address with the
wrong size, and where an overlap finding points.  The expectations are the rules themselves: a
resident's bytes [address, address + size) lie inside a window's [address, address + size); two
ranges overlap when each starts before the other ends."""
from __future__ import annotations

from types import SimpleNamespace

import pytest

from bobc.certify.residents import check_residents
from bobc.errors import Span
from bobc.plan.model import DeviceArena, Phase, Resident

WINDOW = Resident("w", 0x1000, 0x1000, 256)       # [0x1000, 0x2000)


def kinds(windows, residents, phases=()):
    found = check_residents(SimpleNamespace(arena=DeviceArena(tuple(windows), tuple(residents), tuple(phases))))
    return [f.kind for f in found], found


@pytest.mark.parametrize("address, size, inside", [
    (0x1000, 0x1000, True),          # exactly the window
    (0x1ff0, 0x10, True),            # ends at the window's end
    (0x1ff0, 0x11, False),           # one byte past the end
    (0x0fff, 0x10, False),           # starts one byte before the window
    (0x2000, 1, False),              # starts at the window's end
])
def test_a_resident_must_lie_wholly_inside_a_window(address, size, inside):
    found, _ = kinds([WINDOW], [Resident("r", address, size, 1)])
    assert ("outside-window" not in found) == inside, found


def test_overlapping_windows_are_refused():
    windows = [Resident("a", 0x1000, 0x1000, 256), Resident("b", 0x1f00, 0x1000, 256)]
    found, faults = kinds(windows, [])
    assert found == ["overlap"], faults
    assert "windows a [0x1000, 0x2000) and b [0x1f00, 0x2f00) overlap by 256 bytes at [0x1f00, 0x2000)" \
        == faults[0].message


def test_a_phase_naming_a_resident_at_its_address_with_another_size_is_refused():
    resident = Resident("r", 0x1000, 0x100, 256)
    other_size = Resident("r", 0x1000, 0x200, 256)
    found, faults = kinds([WINDOW], [resident], [Phase("p", reads=(other_size,))])
    assert found == ["phase"], faults
    found, _ = kinds([WINDOW], [resident], [Phase("p", reads=(resident,))])
    assert found == []


@pytest.mark.parametrize("order", [(0, 1), (1, 0)])
def test_an_overlap_is_located_at_the_resident_that_starts_inside_the_other(order):
    """The one placed second (higher address) starts inside the other: its address is the fault,
    whichever of the two the plan lists first."""
    low = Resident("low", 0x1000, 0x200, 256, at={"address": Span("plan", 1, 1)})
    high = Resident("high", 0x1100, 0x200, 256, at={"address": Span("plan", 2, 1)})
    residents = [(low, high)[i] for i in order]
    found, faults = kinds([WINDOW], residents)
    assert found == ["overlap"], faults
    assert faults[0].at == Span("plan", 2, 1)
