"""bobc.sim.lanes.first_clash on its own, at what the kernels in test_lane_races_s41.py do not reach
(probe s41 mutants6: mutants of first_clash that passed them).

The rule (docs/simulator.md, "Races within a warp"; PTX memory model): two lanes of one warp whose
stores of one instruction touch the same bytes with different values race.  Expected values from
the addresses alone: lanes 0 and 2 both at 0x100 with lane 1 between them elsewhere is a clash of
lanes 0 and 2, however the lanes are ordered; 64-bit addresses 2^32 apart are different bytes.
"""
from __future__ import annotations

import numpy as np

from bobc.sim.lanes import first_clash


def _rows(*values):
    return np.array(values, dtype="<u4").view(np.uint8).reshape(len(values), 4)


def test_a_clash_between_lanes_that_are_not_neighbours_is_found():
    addresses = np.array([0x100, 0x104, 0x100], dtype=np.uint64)
    assert first_clash(addresses, _rows(1, 2, 3), True) == (0, 2)


def test_addresses_two_to_the_32_apart_are_different_bytes():
    addresses = np.array([0x2_0000_0100, 0x1_0000_0100, 0x0_0000_0100], dtype=np.uint64)
    assert first_clash(addresses, _rows(1, 2, 3), True) is None
    # the same three lanes, two of them at one address: found
    same = np.array([0x2_0000_0100, 0x1_0000_0100, 0x2_0000_0100], dtype=np.uint64)
    assert first_clash(same, _rows(1, 2, 3), True) == (0, 2)


def test_the_lanes_named_are_the_ones_that_store_under_a_predicate():
    """Lanes 0..3 are predicated off (tid < 4); lanes 4.. store their tid to out[0]: the first two that
    clash are lanes 4 and 5 (values 4 and 5), not lanes 0 and 1 -- the message names threads by the
    executing mask; the fault's thread is the later of the two (lane 5), as its message names it second."""
    import pytest

    from bobc.sim.faults import LanesRace

    from .test_lane_races_s41 import _run

    with pytest.raises(LanesRace) as caught:
        _run("    ISETP.LT.U32.AND P0, PT, R0, 0x4, PT\n    @!P0 STG.E [R10.64], R0\n", "sm_86")
    message = caught.value.message
    assert "thread (4, 0, 0) of block (0, 0, 0) (warp 0, lane 4) stores 0x00000004" in message, message
    assert "thread (5, 0, 0) of block (0, 0, 0) (warp 0, lane 5) stores 0x00000005" in message, message
    assert caught.value.thread == 5
