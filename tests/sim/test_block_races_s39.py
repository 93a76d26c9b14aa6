"""Races between the blocks of one launch (probe s39 blockrace; bobc.sim.races): two blocks' plain
global accesses to one byte, one a store, that no synchronization orders, are refused naming both
blocks, both instructions and the address -- on a GPU the blocks run in either order or at once,
while the simulator's lock-step order gives one answer and hid the race.  What the PTX memory
model orders is let through: each block its own bytes (sub-word stores to different bytes of one
word too), reads shared by every block, and the split-K "ticket" (stores, a .gpu fence, an atomic
drawing the ticket; the block drawing the last reads the others' stores)."""
from __future__ import annotations

import numpy as np
import pytest

from bobc.sim.faults import BlocksRace
from bobc.sim.kernel import buffer_addresses, run_kernel

from .conftest import above_shared_base

TARGETS = pytest.mark.parametrize("target", ["sm_86", "sm_90"])


def _ticket_kernel(fence: str) -> str:
    """partial[32 cta + tid] = 32 cta + tid + 7; `fence`; thread 0 draws the ticket (atom.inc, wraps
    after 1); the block drawing 1 writes out[tid] = partial[tid] + partial[32 + tid]."""
    return f"""
.kernel ticket_sum
.shared 4
    S2R R0, SR_TID.X
    S2R R1, SR_CTAID.X
    ULDC.64 UR4, c[0x0][memory_descriptor]
    LEA R9, R1, R0, 0x5
    IADD3 R12, R9, 0x7, RZ
    ULDC.64 UR6, c[0x0][param+0x8]
    LEA R10, P0, R9, UR6, 0x2
    IADD3.X R11, RZ, UR7, RZ, P0, !PT
    STG.E [R10.64], R12
    {fence}
    BAR.SYNC.DEFER_BLOCKING 0x0
    ISETP.NE.U32.AND P0, PT, R0, RZ, PT
    ULDC.64 UR8, c[0x0][param+0x10]
    MOV R2, UR8
    MOV R3, UR9
    MOV R5, 0x1
    MOV R6, RZ
    @!P0 ATOMG.E.INC.STRONG.GPU PT, R4, [R2.64], R5
    @!P0 STS [R6], R4
    BAR.SYNC.DEFER_BLOCKING 0x0
    LDS R4, [R6]
    ISETP.NE.U32.AND P1, PT, R4, R5, PT
    @P1 EXIT
    LEA R14, P0, R0, UR6, 0x2
    IADD3.X R15, RZ, UR7, RZ, P0, !PT
    LDG.E R16, [R14.64]
    LDG.E R17, [R14.64+0x80]
    IADD3 R18, R16, R17, RZ
    ULDC.64 UR10, c[0x0][param+0x0]
    LEA R20, P0, R0, UR10, 0x2
    IADD3.X R21, RZ, UR11, RZ, P0, !PT
    STG.E [R20.64], R18
    EXIT
"""


def _ticket(fence: str, target: str):
    buffers = {"out": np.zeros(32, np.uint32), "partial": np.zeros(64, np.uint32), "ticket": np.zeros(1, np.uint32)}
    at = buffer_addresses(buffers)
    params = b"".join(int(at[name]).to_bytes(8, "little") for name in ("out", "partial", "ticket"))
    return run_kernel(above_shared_base(_ticket_kernel(fence), target), target, grid=(2,), block=(32,), params=params, buffers=buffers)


@TARGETS
def test_the_split_k_ticket_orders_the_last_blocks_reads(target):
    out = _ticket("MEMBAR.ALL.GPU", target)["out"]
    tid = np.arange(32)
    assert list(out) == list((tid + 7) + (32 + tid + 7))


def test_without_the_fence_the_ticket_orders_nothing():
    """An atomic with no .gpu fence before it is relaxed (PTX: no release pattern): the last block's
    load of the other block's partial is a race."""
    with pytest.raises(BlocksRace) as caught:
        _ticket("NOP", "sm_86")
    message = caught.value.message
    assert "block (0, 0, 0) stores to them" in message and "STG.E [R10.64], R12" in message, message
    assert "block (1, 0, 0) loads them" in message and "LDG.E R16, [R14.64]" in message, message
    assert "no synchronization orders the two" in message
    assert caught.value.hint and "MEMBAR" in caught.value.hint


def _store_kernel(index: str, size: str = "") -> str:
    """Every block stores its thread index at out (as bytes with size U8) [`index`]: R0 (the thread,
    the same bytes in every block) or R9 (32 cta + tid, the block's own)."""
    return f"""
.kernel stores
    S2R R0, SR_TID.X
    S2R R1, SR_CTAID.X
    ULDC.64 UR4, c[0x0][memory_descriptor]
    LEA R9, R1, R0, 0x5
    ULDC.64 UR6, c[0x0][param+0x0]
    IADD3 R10, P0, {index}, UR6, RZ
    IADD3.X R11, RZ, UR7, RZ, P0, !PT
    STG.E{size} [R10.64], R0
    EXIT
"""


def _stores(index: str, size: str, target: str = "sm_86"):
    buffers = {"out": np.zeros(64, np.uint8)}
    at = buffer_addresses(buffers)
    return run_kernel(_store_kernel(index, size), target, grid=(2,), block=(32,),
                      params=int(at["out"]).to_bytes(8, "little"), buffers=buffers)


@TARGETS
def test_two_blocks_storing_one_byte_race(target):
    with pytest.raises(BlocksRace) as caught:
        _stores("R0", ".U8", target)
    message = caught.value.message
    assert "blocks race on 1 byte at" in message and "(in out, 0 bytes in)" in message, message
    assert "block (0, 0, 0) stores to it" in message and "block (1, 0, 0) stores to it" in message, message


def test_each_block_its_own_bytes_of_shared_words_runs():
    """Byte stores of different blocks into one 4-byte word touch different bytes: no race."""
    assert list(_stores("R9", ".U8")["out"]) == list(range(32)) * 2


def test_the_same_kernel_in_one_block_runs():
    out = run_kernel(_store_kernel("R0", ".U8"), "sm_86", grid=(1,), block=(32,),
                     params=int(buffer_addresses({"out": np.zeros(64, np.uint8)})["out"]).to_bytes(8, "little"),
                     buffers={"out": np.zeros(64, np.uint8)})["out"]
    assert list(out[:32]) == list(range(32))


# ---------------------------------------------------------------- the order itself (bobc.sim.races)
def _order(blocks: int = 3):
    from bobc.sim.races import BlockOrder
    # one thread a block; the words stores can reach: 0x100 .. 0x140 (data) and 0x200 (the flag)
    return BlockOrder(blocks, np.arange(blocks), np.array([0x40, 0x80], np.uint64), np.array([0x50, 0x81], np.uint64))


def _at(*addresses):
    return np.array(addresses, dtype=np.uint64)


def _release(order, block, flag=0x200):
    mask = np.arange(order.blocks) == block
    order.fence(mask)
    order.atomic(_at(flag), mask, returns=False)       # RED on the flag


def test_a_red_releases_but_only_an_atomic_returning_a_value_acquires():
    order = _order()
    order.access(_at(0x100), 4, np.array([0]), pc=0x10, writes=True)
    _release(order, 0)
    order.atomic(_at(0x200), np.arange(3) == 1, returns=False)      # block 1: RED, reads nothing
    order.access(_at(0x100), 4, np.array([1]), pc=0x20, writes=False)
    race = order.first_race()
    assert race is not None and race.first == (0, 0x10, True) and race.second == (1, 0x20, False)

    order = _order()
    order.access(_at(0x100), 4, np.array([0]), pc=0x10, writes=True)
    _release(order, 0)
    order.atomic(_at(0x200), np.arange(3) == 1, returns=True)       # block 1: ATOMG, acquires
    order.access(_at(0x100), 4, np.array([1]), pc=0x20, writes=False)
    assert order.first_race() is None


def test_the_order_is_transitive_and_an_access_after_the_fence_is_not_released():
    order = _order()
    order.access(_at(0x100), 4, np.array([0]), pc=0x10, writes=True)
    _release(order, 0)
    order.access(_at(0x104), 4, np.array([0]), pc=0x30, writes=True)     # after block 0's fence
    order.atomic(_at(0x200), np.arange(3) == 1, returns=True)            # block 1 acquires 0 ...
    _release(order, 1, flag=0x208)                                       # ... and releases on another flag
    order.atomic(_at(0x208), np.arange(3) == 2, returns=True)            # block 2 acquires 1, so 0
    order.access(_at(0x100, 0x104), 4, np.array([2, 2]), pc=0x20, writes=False)
    race = order.first_race()
    assert race is not None and race.word == 0x104 // 4, "only the store after the fence races"
    assert race.first == (0, 0x30, True) and race.second == (2, 0x20, False)


def test_loads_and_stores_outside_what_stores_can_reach_are_not_recorded():
    order = _order(2)
    order.access(_at(0x300), 4, np.array([0]), pc=0x10, writes=False)
    order.access(_at(0x300), 4, np.array([1]), pc=0x20, writes=False)
    assert order.first_race() is None and order._parts == []
