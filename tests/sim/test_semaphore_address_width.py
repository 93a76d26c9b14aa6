"""SEM_ADDR_HI's OFFSET is 7:0 on AMPERE_CHANNEL_GPFIFO_A (open-gpu-doc clc56f.h
NVC56F_SEM_ADDR_HI_OFFSET) and 24:0 on HOPPER_CHANNEL_GPFIFO_A (OGKM clc86f.h): the host takes
those bits of the data, so the same data releases at different addresses on the two GPUs (probe
s33 qmdaudit, finding 8a).  The simulator knows the channel class from the compute class bound."""
from __future__ import annotations

import pytest

from bobc.sim.channel import Channel
from bobc.sim.faults import SimulationFault
from bobc.sim.memory import Memory

AMPERE_COMPUTE_B, HOPPER_COMPUTE_A = 0xC7C0, 0xCBC0


def _address(compute_class, high):
    channel = Channel(Memory([], []), check_hazards=False, contracts=None)
    if compute_class is not None:
        channel.bound[1] = compute_class
    channel.m_SEM_ADDR_LO(0, 0x30000000, "test")
    channel.m_SEM_ADDR_HI(0, high, "test")
    return channel.sem_address


@pytest.mark.parametrize("compute_class, bits", [(AMPERE_COMPUTE_B, 8), (HOPPER_COMPUTE_A, 25)])
def test_sem_addr_hi_takes_the_channel_classs_bits(compute_class, bits):
    high = 0xFFFFFFFF
    assert _address(compute_class, high) == ((1 << bits) - 1) << 32 | 0x30000000
    assert _address(compute_class, 0x10) == 0x10_3000_0000      # what bobc's images write: the same on both


def test_sem_addr_hi_before_a_compute_class_is_bound_is_refused():
    with pytest.raises(SimulationFault, match="SEM_ADDR_HI with no compute class bound"):
        _address(None, 0x10)
