"""Runtime.ArenaCertificate's alignment rule is bobc's certifier's (probe s39 stdlib finding 9):
an alignment is a power of two and the address a multiple of it.  arenaCertificate took an
alignment of 0 as 1 and any other modulus (3, 6, 12) as an alignment; the certifier
(compiler/bobc/certify/residents.py) refuses both as misaligned."""
from __future__ import annotations

from types import SimpleNamespace

import pytest

# (address, bytes, alignment)
CASES = [(0, 8, 1), (8, 8, 8), (16, 8, 16), (12, 4, 4), (12, 4, 8), (6, 2, 3), (12, 4, 6), (24, 8, 12),
         (8, 8, 0), (0, 8, 0), (32, 8, 32), (0, 4, 2 ** 40)]


@pytest.mark.parametrize("address, size, alignment", CASES)
def test_arena_certificate_aligns_as_the_certifier(probe, address, size, alignment):
    from bobc.certify.residents import check_residents
    from bobc.plan.model import DeviceArena, Resident

    program = probe("import Runtime.ArenaCertificate\n\n"
                    f"def native : Nat = (arenaCertificate 64 (constructor ArenaResidents ArenaResidentsNext "
                    f"(constructor ArenaResident ArenaResidentValue b\"r\" {address} {size} {alignment}) "
                    f"(constructor ArenaResidents ArenaResidentsEnd)))\n")
    arena = DeviceArena(windows=(Resident("w", 0, 64, 1),), globals=(Resident("r", address, size, alignment),), phases=())
    findings = check_residents(SimpleNamespace(arena=arena))
    assert (program.value("native").value == 1) == (not findings), findings
    # the rule itself, stated independently
    power_of_two = alignment > 0 and alignment & (alignment - 1) == 0
    assert (program.value("native").value == 1) == (power_of_two and address % alignment == 0)
