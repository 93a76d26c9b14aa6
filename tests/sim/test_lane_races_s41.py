"""Races within a warp (probe s41 lanerace; bobc.sim.lanes): lanes of one warp that store different
values to the same bytes in one plain STG / STS are refused, naming the instruction, both lanes, the
bytes and both values.

Expected verdicts come from the PTX memory model (PTX ISA, "Memory Consistency Model": the lanes
of a warp are threads; two weak stores to one location by threads no causality order relates are a
data race, and a read returns the value of one of them) and CUDA's programming guide ("If a
non-atomic instruction executed by a warp writes to the same location ... for more than one of the
threads of the warp, ... which thread performs the final write is undefined"): different values ->
unspecified result -> refused; the same value from every lane -> whichever lands, memory holds that
value -> accepted; lanes touching distinct bytes, lanes predicated off, and atomics -> no race.
Before: every kernel here was accepted, the racing ones with lane 31's value (out[0] == 31)."""
from __future__ import annotations

import numpy as np
import pytest

from bobc.sim.faults import LanesRace
from bobc.sim.kernel import buffer_addresses, run_kernel

from .conftest import shared_base

TARGETS = pytest.mark.parametrize("target", ["sm_86", "sm_90"])

HEAD = """
    S2R R0, SR_TID.X
    ULDC.64 UR4, c[0x0][memory_descriptor]
    ULDC.64 UR6, c[0x0][param+0x0]
    MOV R10, UR6
    MOV R11, UR7
"""


def _run(body: str, target: str, shared: int = 0, threads: int = 32):
    kernel = ".kernel lanes\n" + (f".shared {shared}\n" if shared else "") + HEAD + body + "    EXIT\n"
    buffers = {"out": np.zeros(threads, np.uint32)}
    at = buffer_addresses(buffers)
    return run_kernel(kernel, target, grid=(1,), block=(threads,), params=int(at["out"]).to_bytes(8, "little"),
                      buffers=buffers)["out"]


@TARGETS
def test_lanes_storing_different_values_to_one_global_word_race(target):
    """Every lane stores its own tid to out[0]: 32 different values, one word."""
    with pytest.raises(LanesRace) as caught:
        _run("    STG.E [R10.64], R0\n", target)
    message = caught.value.message
    assert "instruction at 0x0050 (STG.E " in message and "[R10.64], R0)" in message, message   # sm_90: desc[UR4]
    assert "lanes of one warp store different values to the same 4 bytes at 0x" in message, message
    assert "(in out, 0 bytes in)" in message, message
    assert "thread (0, 0, 0) of block (0, 0, 0) (warp 0, lane 0) stores 0x00000000" in message, message
    assert "thread (1, 0, 0) of block (0, 0, 0) (warp 0, lane 1) stores 0x00000001" in message, message
    assert "unspecified" in message
    assert "store from one lane" in caught.value.hint and "atomic" in caught.value.hint
    assert caught.value.exit_code == 7


@TARGETS
def test_lanes_storing_different_values_to_one_shared_word_race(target):
    at = 0x8 + shared_base(target)      # past sm_90's system KiB (docs/targets.md)
    with pytest.raises(LanesRace) as caught:
        _run(f"    STS [{at:#x}], R0\n    LDS R4, [{at:#x}]\n    STG.E [R10.64], R4\n", target, shared=at + 56)
    message = caught.value.message
    assert f"(STS [{at:#x}], R0)" in message and f"the same 4 bytes at shared byte {at:#x}" in message, message


@TARGETS
def test_lanes_storing_the_same_value_are_accepted(target):
    """All lanes store 7 to out[0]: whichever lane's write lands, out[0] is 7 (deterministic)."""
    at = shared_base(target)            # past sm_90's system KiB (docs/targets.md)
    out = _run(f"    MOV R2, 0x7\n    STG.E [R10.64], R2\n    STS [{at:#x}], R2\n    LDS R4, [{at:#x}]\n"
               "    STG.E [R10.64+0x4], R4\n", target, shared=at + 16)
    assert out[0] == 7 and out[1] == 7


def test_byte_stores_to_distinct_bytes_of_one_word_are_accepted():
    """Lanes 0..3 store their tid to bytes 0..3 of out[0] (no byte shared): no race; lanes 4.. are
    predicated off (a lane that does not execute the store does not race)."""
    out = _run("    ISETP.GE.U32.AND P0, PT, R0, 0x4, PT\n    IADD3 R12, P1, R10, R0, RZ\n"
               "    IADD3.X R13, RZ, R11, RZ, P1, !PT\n    @!P0 STG.E.U8 [R12.64], R0\n", "sm_86")
    assert int(out[0]) == 0x03020100


def test_byte_stores_of_different_values_to_one_byte_race():
    """Lanes 0..3 store their tid to byte 1 of out[0]: one byte, four values."""
    with pytest.raises(LanesRace) as caught:
        _run("    ISETP.GE.U32.AND P0, PT, R0, 0x4, PT\n    @!P0 STG.E.U8 [R10.64+0x1], R0\n", "sm_86")
    assert "the same 1 byte at 0x" in caught.value.message and "stores 0x01" in caught.value.message


def test_one_lane_storing_is_accepted():
    out = _run("    ISETP.NE.U32.AND P0, PT, R0, 0x5, PT\n    @!P0 STG.E [R10.64], R0\n", "sm_86")
    assert out[0] == 5


def test_atomics_of_every_lane_on_one_word_are_accepted():
    """Atomics never race: every lane adds its tid to out[0] (0 + 1 + ... + 31 = 496)."""
    out = _run("    ATOMG.E.ADD.STRONG.GPU PT, R4, [R10.64], R0\n", "sm_86")
    assert out[0] == 496


def test_lanes_of_different_warps_are_left_to_the_warps_check():
    """Lane 0 of warp 0 and lane 0 of warp 1 store different values to out[0]: two warps, not two
    lanes of one warp -- the launch-end check of bobc.sim.races refuses it as a warps race."""
    from bobc.sim.faults import WarpsRace
    with pytest.raises(WarpsRace):
        _run("    LOP3.LUT P0, RZ, R0, 0x1f, RZ, 0xc0, !PT\n    @!P0 STG.E [R10.64], R0\n", "sm_86", threads=64)
