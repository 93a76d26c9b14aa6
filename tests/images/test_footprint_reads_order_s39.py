"""A launch's footprint holds the bytes its read pointers reach, so a launch that reads what another
writes stays ordered after it (probe s39 mutants2: footprints without the read pointers' ranges --
every read-after-write pair free to run at once -- went through the launch-order tests).

The oracle is the synthetic Bob plan's meaning and docs/launch-order.md's rule: two launches may run
at the same time only when neither writes a byte the other reads or writes.  Bob's greedy decoding
gathers a row (bob-row-gather writes it: its pointer 0 is `write`) and then takes its argmax
(bob-greedy-argmax reads that row: its pointer 1 is `read`), so each argmax depends on the gather
before it; two gathers of different rows only read the same table, and may run at once."""
import synthetic_bob as bob
from bobc.certify.footprints import Footprint, merged, program_conflicts
from bobc.targets import SM86


def test_an_argmax_is_ordered_after_the_gather_whose_row_it_reads():
    plan = bob.bob_whole_program_plan()
    names = [plan.regions[launch.region].identity for launch in plan.launches]
    assert names[1:5] == ["bob-row-gather", "bob-greedy-argmax", "bob-row-gather", "bob-greedy-argmax"]
    conflicts = program_conflicts(plan, SM86)
    assert conflicts(1, 2) and conflicts(3, 4)        # each argmax reads the row its gather wrote
    assert not conflicts(1, 3)                        # two gathers: shared reads, their own rows written
    assert not conflicts(2, 4)                        # two argmaxes of different rows, different results


def test_a_read_only_footprint_conflicts_with_a_write_of_its_bytes_only():
    reader = Footprint(reads=[(0x100, 0x200)])
    assert reader.conflicts(Footprint(writes=[(0x1FF, 0x201)]))
    assert not reader.conflicts(Footprint(writes=[(0x200, 0x300)]))     # [start, end): 0x200 is not read
    assert not reader.conflicts(Footprint(reads=[(0x100, 0x200)]))      # two readers never conflict


def test_adjacent_intervals_are_joined():
    # the module's docstring: sorted, empty ones dropped, overlapping or adjacent ones joined
    assert merged([(8, 12), (0, 4), (4, 8), (20, 20)]) == ((0, 12),)


def test_a_launch_whose_pointer_extent_is_unknown_is_ordered_against_every_other():
    # bobc.certify.footprints: a pointer with a `resident` extent and no arena to find its resident in
    # (a program's own encode reads no arena) makes the launch's footprint unknown: ordered against all
    import dataclasses

    from bobc.certify.footprints import contract_conflicts

    plan = bob.bob_whole_program_plan()
    contracts = dict(program_conflicts(plan, SM86).contracts)
    argmax = contracts["bob-greedy-argmax"]
    contracts["bob-greedy-argmax"] = dataclasses.replace(argmax, arguments=tuple(
        dataclasses.replace(a, rule="resident") if a.index == 1 else a for a in argmax.arguments))
    conflicts = contract_conflicts(plan, contracts)
    assert conflicts.footprints[2] is None
    assert conflicts(2, 4) and conflicts(2, 5)        # unknown: never beside another launch
    assert not conflicts(1, 3)                        # the others' footprints as before
