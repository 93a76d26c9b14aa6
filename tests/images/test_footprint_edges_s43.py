"""Footprint edges no launch-order test pinned (session 43 mutants of bobc.certify.footprints).

Each case below survived every footprint and launch-order test as a mutant:
- merged() shortening an interval that contains the next one ([0, 16) then [4, 8) merged to
  [0, 8)): a footprint would lose bytes it touches -- an under-approximation, so two launches
  touching [8, 16) could be chained beside each other (a race);
- a batched pointer (`each COUNT by STRIDE`, docs/kernel-contracts.md) whose batches were all
  taken at its address: the later batches' bytes left out, the same under-approximation;
- nearest_pointer measuring a distance past a span's end one byte short, so an address between
  two pointers named the farther one.

Expected values are hand arithmetic from the rules quoted: intervals are [start, end); batch b
touches [address + b * STRIDE, + extent); a byte's distance to a span is to its nearest byte.
"""
import dataclasses

import synthetic_bob as bob
from bobc.certify.footprints import Footprint, contract_conflicts, merged, program_conflicts
from bobc.certify.kernels import Argument
from bobc.targets import SM86

ROW = 0x1100103000          # the synthetic Bob plan's launch 1 (a bob-row-gather) writes 1,024 bytes here


def test_an_interval_inside_the_previous_one_keeps_the_previous_end():
    assert merged([(0, 16), (4, 8)]) == ((0, 16),)
    assert merged([(4, 8), (0, 16), (20, 24), (21, 22)]) == ((0, 16), (20, 24))
    writer = Footprint(writes=[(0x100, 0x200), (0x120, 0x140)])
    assert writer.writes == ((0x100, 0x200),)
    assert writer.conflicts(Footprint(reads=[(0x180, 0x181)]))     # 0x180 lies in [0x100, 0x200)


def test_every_batch_of_a_batched_pointer_is_in_the_footprint():
    plan = bob.bob_whole_program_plan()
    contracts = dict(program_conflicts(plan, SM86).contracts)
    gather = contracts["bob-row-gather"]
    (row,) = [a for a in gather.arguments if a.index == 0]
    assert (row.access, row.extent, row.batches) == ("write", 1024, "")
    batched = dataclasses.replace(row, batches="3", stride="4096")       # batches at +0, +4096, +8192
    arguments = tuple(batched if a.index == 0 else a for a in gather.arguments)
    contracts["bob-row-gather"] = dataclasses.replace(gather, arguments=arguments)
    footprint = contract_conflicts(plan, contracts).footprints[1]
    assert footprint is not None
    for b in range(3):
        start = ROW + b * 4096
        assert any(lo <= start and start + 1024 <= hi for lo, hi in footprint.writes), (b, footprint)
    # nothing between the batches: [ROW + 1024, ROW + 4096) is not written
    assert not any(lo < ROW + 4096 and ROW + 1024 < hi for lo, hi in footprint.writes), footprint


def test_an_address_between_two_pointers_names_the_nearer():
    a = Argument(0, "pointer", extent=16, access="read", what="A")
    b = Argument(1, "pointer", extent=14, access="read", what="B")
    footprint = Footprint([(0x100, 0x110), (0x112, 0x120)], (),
                          [(0x100, 0x110, a, None, 44, None), (0x112, 0x120, b, None, 45, None)])
    # 0x111: two bytes past A's last byte (0x10f), one byte before B's first (0x112)
    assert footprint.nearest_pointer(0x111) == ("param 1 (word 45, B: read 14 = 14 bytes) [0x112, 0x120), "
                                                "1 byte before its start")
    # 0x110: one byte past A's last byte, two before B's first
    assert footprint.nearest_pointer(0x110).startswith("param 0 (word 44, A: read 16 = 16 bytes) [0x100, 0x110), ")


def test_two_footprints_are_equal_only_with_the_same_reads_and_writes():
    # equality is the merged byte ranges (the class's docstring): writes count as much as reads
    assert Footprint(writes=[(0, 2), (2, 4)]) == Footprint(writes=[(0, 4)])
    assert Footprint(reads=[(0, 4)], writes=[(8, 12)]) != Footprint(reads=[(0, 4)])
    assert Footprint(reads=[(0, 4)]) != Footprint(writes=[(0, 4)])
