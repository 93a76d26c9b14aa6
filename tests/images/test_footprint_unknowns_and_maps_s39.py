"""A launch's footprint counts the bytes its tensor maps write, and is unknown -- ordered against
every other launch -- whenever what it touches cannot be known (probe s39 mutants3: tensor-map writes
left out of footprints, a pointer whose activity cannot be known, a map of unknown extent, an
undeclared word holding a window address and a launch of no region each went through every
launch-order test).

The oracles: docs/launch-order.md, "Footprints": "every active pointer word's extent ... read or
written", and "A launch whose footprint cannot be known (... a word it names is missing) conflicts
with everything"; bobc.certify.footprints' docstring: the footprint holds "every tensor map it makes
the kernel read: the map's extent from its pointer, with that pointer's access", and is unknown when
"a word the contract does not declare holds an address inside a window"; docs/kernel-contracts.md's
tensor map extent: an element past the farthest in-bounds element, element + sum (dims[i] - 1) x
strides[i] (dimension 0's stride the element's size).  The synthetic Bob plan: launch 1 is a
bob-row-gather whose argument 0 (word 44, 0x1100103000) is the 1,024-byte logit row it writes,
argument 1 (word 45) the prompt's last byte it reads; launch 3 is the next gather."""
import dataclasses

import pytest

import synthetic_bob as bob
from bobc.certify.footprints import contract_conflicts, launch_footprint, program_conflicts
from bobc.certify.kernels import TensorMap
from bobc.plan.model import DeviceArena, Plan, Resident
from bobc.targets import SM86

ROW = 0x1100103000          # launch 1's argument 0: the logit row it writes
ARGUMENT_WORD = 44          # the synthetic plan's parameter base, in words


@pytest.fixture(scope="module")
def plan():
    return bob.bob_whole_program_plan()


@pytest.fixture(scope="module")
def contracts(plan):
    return dict(program_conflicts(plan, SM86).contracts)


def gather_with(contracts, **values):
    out = dict(contracts)
    out["bob-row-gather"] = dataclasses.replace(contracts["bob-row-gather"], **values)
    return out


def test_the_plan_is_as_these_tests_take_it(plan, contracts):
    names = [plan.regions[launch.region].identity for launch in plan.launches]
    assert names[1] == names[3] == "bob-row-gather"
    words = {p.word: p.value for p in plan.launches[1].patches}
    assert words[ARGUMENT_WORD] == ROW
    (row,) = [a for a in contracts["bob-row-gather"].arguments if a.index == 0]
    assert (row.access, row.extent) == ("write", 1024)


def row_map(dims):
    # binary32 rows of 1,024 bytes over the row pointer (argument 0, which the gather writes)
    return TensorMap(word=9, pointer=0, element="binary32", dims=dims, strides=("1024",), box=(4, 1),
                     swizzle="none", what="the rows")


def test_a_map_over_a_written_pointer_is_written_to_its_extent(plan, contracts):
    # dims (256, 5): 4 + 255 x 4 + 4 x 1024 = 5,120 bytes from the row, past its own 1,024
    conflicts = contract_conflicts(plan, gather_with(contracts, tensor_maps=(row_map(("256", "5")),)))
    footprint = conflicts.footprints[1]
    assert footprint is not None
    assert any(a <= ROW and ROW + 5120 <= b for a, b in footprint.writes), footprint
    assert not any(a < ROW + 5121 and ROW + 5120 < b for a, b in footprint.writes), footprint


def test_a_map_of_unknown_extent_makes_the_footprint_unknown(plan, contracts):
    # its second dimension names word 9 past the base, which the launch does not set
    conflicts = contract_conflicts(plan, gather_with(contracts, tensor_maps=(row_map(("256", "lo[9]")),)))
    assert conflicts.footprints[1] is None
    assert conflicts(1, 3)                          # unknown: never beside another launch
    assert conflicts.footprints[3] is None          # the other gather: the same contract, the same map


def test_a_pointer_whose_activity_cannot_be_known_makes_the_footprint_unknown(plan, contracts):
    gather = contracts["bob-row-gather"]
    # argument 1 touched `when lo[9]&1`: word 9 past the base is not set, so whether it is touched is unknown
    arguments = tuple(dataclasses.replace(a, condition="when lo[9]&1") if a.index == 1 else a
                      for a in gather.arguments)
    conflicts = contract_conflicts(plan, gather_with(contracts, arguments=arguments))
    assert conflicts.footprints[1] is None
    assert conflicts(1, 3)


def test_an_undeclared_word_holding_a_window_address_makes_the_footprint_unknown(plan, contracts):
    gather = contracts["bob-row-gather"]
    # argument 1 (word 45) left out of the contract: its value is an address the kernel may use
    undeclared = dataclasses.replace(gather, arguments=tuple(a for a in gather.arguments if a.index != 1))
    address = {p.word: p.value for p in plan.launches[1].patches}[ARGUMENT_WORD + 1]
    window = DeviceArena((Resident("w", address - 16, 64, 16),), (), ())
    assert launch_footprint(Plan(plan, window), 1, undeclared, ARGUMENT_WORD) is None
    # the same word outside every window: an ordinary number, the footprint is known
    elsewhere = DeviceArena((Resident("w", address + 64, 64, 16),), (), ())
    assert launch_footprint(Plan(plan, elsewhere), 1, undeclared, ARGUMENT_WORD) is not None


def test_a_launch_of_no_region_is_ordered_against_every_other(plan, contracts):
    launches = list(plan.launches)
    launches[1] = dataclasses.replace(launches[1], region=len(plan.regions))
    conflicts = contract_conflicts(dataclasses.replace(plan, launches=tuple(launches)), contracts)
    assert conflicts.footprints[1] is None
    assert conflicts(1, 3)
    assert conflicts.footprints[3] is not None
