"""Edges of the simulator's memory model (bobc.sim.memory) that surviving mutants showed untested
(session 46 mutants12).  Expected values by hand from the rules in the module's docstrings: a
host-side access of [address, address + size) lies in one buffer or is refused by name; a
resident lies in one buffer.
"""
from __future__ import annotations

import numpy as np
import pytest

from bobc.sim.faults import SimulationFault
from bobc.sim.memory import Buffer, Memory, Resident


def memory():
    return Memory([Buffer("arena", 0x1000, np.arange(0x100, dtype=np.uint8))], [Resident("a", 0x1000, 0x100)])


def test_a_host_read_running_past_its_buffer_is_refused_not_cut_short():
    """0x10FC + 8 = 0x1104 > 0x1100, the buffer's end: a u64 there is refused (a mutant that
    checked only the first byte read the 4 bytes left and called them the value)."""
    m = memory()
    assert m.u64(0x10F8) == int.from_bytes(bytes(range(0xF8, 0x100)), "little")     # the last 8 bytes
    with pytest.raises(SimulationFault, match=r"8 bytes at 0x10fc lie in no mapped buffer"):
        m.u64(0x10FC)
    with pytest.raises(SimulationFault, match="lie in no mapped buffer"):
        m.write(0x10FF, b"\0\0")
    assert m.read(0x10FF, 1) == b"\xff"


def test_a_resident_running_past_its_buffer_is_refused():
    with pytest.raises(SimulationFault, match=r"resident a \[0x1000, \+257\) lies in no mapped buffer"):
        Memory([Buffer("arena", 0x1000, np.zeros(0x100, np.uint8))], [Resident("a", 0x1000, 0x101)])


def test_touching_buffers_are_taken_and_buffers_sharing_a_byte_refused():
    """[0x1000, 0x1100) and [0x1100, 0x1200) share no byte; [0x1000, 0x1101) and [0x1100, ...)
    share 0x1100 (a mutant refusing buffers that only touch survived the sim tests)."""
    low, high = Buffer("low", 0x1000, np.zeros(0x100, np.uint8)), Buffer("high", 0x1100, np.ones(0x100, np.uint8))
    m = Memory([high, low], [Resident("a", 0x10FC, 4), Resident("b", 0x1100, 4)])
    assert m.read(0x10FC, 4) == b"\0" * 4 and m.read(0x1100, 4) == b"\1" * 4
    with pytest.raises(SimulationFault, match="lie in no mapped buffer"):      # one access, two buffers
        m.read(0x10FF, 2)
    with pytest.raises(SimulationFault, match="buffers low and high overlap"):
        Memory([Buffer("low", 0x1000, np.zeros(0x101, np.uint8)), high], [])


def test_a_row_starting_inside_a_word_counts_every_word_it_touches():
    """The launch-order check's words (LaunchAccesses, address // 4): a TMA row of 4 bytes at
    0x1002 touches bytes 0x1002..0x1005, so words 0x400 and 0x401; 8 bytes at 0x1006 touch
    0x1006..0x100d, words 0x401..0x403 (a mutant counting (width + 3) // 4 words from the first
    dropped each row's last word: two launches writing and reading it looked disjoint)."""
    from bobc.sim.memory import LaunchAccesses

    accesses = LaunchAccesses()
    accesses.read_rows(np.array([0x1002], np.uint64), 4)
    assert accesses.sets()[0].tolist() == [0x400, 0x401]
    accesses = LaunchAccesses()
    accesses.read_rows(np.array([0x1006, 0x1106], np.uint64), 8)
    assert accesses.sets()[0].tolist() == [0x401, 0x402, 0x403, 0x441, 0x442, 0x443]
    accesses = LaunchAccesses()
    accesses.read_rows(np.array([0x1000], np.uint64), 16)
    assert accesses.sets()[0].tolist() == [0x400, 0x401, 0x402, 0x403]


@pytest.mark.parametrize("size", [1, 2])
def test_a_sub_word_load_of_what_another_block_stores_is_a_race(size):
    """Block 1 stores the word at 0x1000, block 0 loads byte(s) of it at 0x1002 with no ordering
    between them: a race between blocks (two blocks touch a byte, one stores); block 0 loading
    0x1004, which no block stores, is none.  A mutant recording no sub-word load (LDG.U8 / .U16)
    for the race check survived the sim tests."""
    from bobc.sim.memory import Residency
    from bobc.sim.races import BlockOrder

    def run(load_at):
        m = memory()
        m.races = BlockOrder(2, np.zeros(1, np.int64), np.array([0x1000 // 4], np.uint64),
                             np.array([0x1100 // 4], np.uint64))
        touched = Residency(2)
        touched.lanes = np.array([1])
        m.store(np.array([0x1000], np.uint64), np.array([[7]], np.uint32), "k", 0x10, "STG.E", touched)
        touched.lanes = np.array([0])
        m.load_bytes(np.array([load_at], np.uint64), size, "k", 0x20, "LDG.E.U8", touched)
        return m.races.first_race()

    race = run(0x1002)
    assert race is not None and {race.first[0], race.second[0]} == {0, 1}, race
    assert run(0x1004) is None


def test_the_store_words_of_a_span_ending_inside_a_word_keep_that_word():
    """The words a launch's stores can reach (the race check's places) for a contract writing
    [0x1000, 0x1006) -- three f16 -- are 0x400 and 0x401 (0x1004 // 4): [0x400, 0x402); with no
    contract, the residents' [0x1000, 0x1100): [0x400, 0x440).  A mutant rounding the end down
    lost word 0x401, where a store of the third f16 would go unrecorded."""
    from types import SimpleNamespace

    m = memory()
    starts, ends = m.store_words()
    assert (starts.tolist(), ends.tolist()) == ([0x400], [0x440])
    m.footprint = SimpleNamespace(reads=[], writes=[(0x1000, 0x1006)], nearest_pointer=lambda address: "")
    starts, ends = m.store_words()
    assert (starts.tolist(), ends.tolist()) == ([0x400], [0x402])
