"""The program residence's refusals (bobc.nvidia.residence.check) at their exact edges, which
session 42's mutation testing (notes/s42/probe-mutants7.md) found no test held (the s38 tests
refuse residences far past each bound).  The rules, from the module's docstring: a QMD's prefetch
and dependent pointers hold address >> 8 in 32 bits, so the residence ends at or below 2^40; it
holds the whole program table; it shares no byte with the plan's buffers (half-open ranges: a
residence ending where the program table starts shares none)."""
from __future__ import annotations

import pytest

import synthetic_bob as bob
from bobc.certify.footprints import program_conflicts
from bobc.errors import BobcError
from bobc.nvidia import residence
from bobc.nvidia.encode import plan_layout
from bobc.targets import SM86


@pytest.fixture(scope="module")
def setting():
    plan = bob.bob_whole_program_plan()
    conflicts = program_conflicts(plan, SM86)
    return plan, plan_layout(plan, SM86, conflicts.contracts), conflicts.footprints


def check(setting, base, size):
    plan, layout, footprints = setting
    residence.check(plan, layout, residence.Residence(plan.program_base, base, size), footprints)


def test_a_residence_ending_at_2_to_the_40_is_taken_and_one_line_more_refused(setting):
    need = setting[1].program_bytes
    check(setting, (1 << 40) - need, need)
    with pytest.raises(BobcError, match=r"reaches past 2\^40"):
        check(setting, (1 << 40) - need, need + 256)


def test_a_residence_of_exactly_the_table_is_taken_and_16_bytes_less_refused(setting):
    need = setting[1].program_bytes
    home = 0x12_0000_0000
    check(setting, home, need)
    with pytest.raises(BobcError, match=f"cannot hold the {need}-byte program table"):
        check(setting, home, need - 16)


def test_a_residence_touching_the_program_table_shares_no_byte_with_it(setting):
    plan, layout, _ = setting
    need = layout.program_bytes
    check(setting, plan.program_base - need, need)          # ends where the table starts
    with pytest.raises(BobcError, match="overlaps the plan's program table"):
        check(setting, plan.program_base - need + 256, need)


def test_a_residence_ending_where_a_launch_writes_is_taken(setting):
    plan, layout, footprints = setting
    need = layout.program_bytes
    lowest = min(start for footprint in footprints for start, _ in footprint.writes)
    assert lowest % 256 == 0
    check(setting, lowest - need, need)                      # [lowest - need, lowest): no byte written
    with pytest.raises(BobcError, match="writes .* inside the residence"):
        check(setting, lowest - need + 256, need)
