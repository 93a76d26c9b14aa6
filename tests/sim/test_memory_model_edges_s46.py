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
