"""The simulator's per-issue shortcuts for small launches keep every answer (probe s43 simstart).

A kernel run by one thread (a new user's two-layer MLP: 43 single-thread launches, 1.1 M issues)
spent its `bobc sim` time in NumPy's per-call overhead on one-element arrays, not in the plan's
fixed costs.  The shortcuts below answer as the vector code does; each test holds a shortcut to
the vector path's own answer (the independent reason: the same function's general branch, fed the
same address twice, whose result must be the one-address result repeated), and checks that the
shortcut is the path taken (counted calls, so that a later edit that drops it shows).
"""
from __future__ import annotations

import numpy as np
import pytest

from bobc.sim import memory as memory_module
from bobc.sim.memory import Buffer, Memory, Resident, _within


def _memory():
    buffers = [Buffer("arena", 0x1000, np.arange(0x200, dtype=np.uint8)),
               Buffer("other", 0x4000, np.arange(0x40, dtype=np.uint8))]
    residents = [Resident("a", 0x1000, 0x40), Resident("b", 0x1040, 0x100), Resident("c", 0x1180, 0x10),
                 Resident("d", 0x4000, 0x40)]
    return Memory(buffers, residents)


ADDRESSES = sorted({x + d for x in (0, 0x1000, 0x1040, 0x1140, 0x1180, 0x1190, 0x1200, 0x4000, 0x4040, 1 << 40)
                    for d in (-8, -4, -1, 0, 1, 4, 8, 12)} - {-8, -4, -1})


@pytest.mark.parametrize("size", [1, 2, 4, 8, 16])
def test_one_address_within_answers_as_the_vector_path(size):
    memory = _memory()
    spans = [(memory._starts, memory._ends), (np.zeros(0, np.uint64), np.zeros(0, np.uint64)),
             (np.array([0x1000, 0x1100], np.uint64), np.array([0x1010, 0x1104], np.uint64))]
    for starts, ends in spans:
        for address in ADDRESSES:
            one = _within(np.array([address], np.uint64), size, starts, ends)
            two = _within(np.array([address, address], np.uint64), size, starts, ends)   # the vector path
            assert one[0].tolist() == two[0][:1].tolist(), (hex(address), size)
            assert one[1].tolist() == two[1][:1].tolist(), (hex(address), size)
            assert one[1].dtype == two[1].dtype


@pytest.mark.parametrize("size", [1, 2, 4, 8, 16])
def test_one_address_rows_answer_as_the_vector_path(size):
    memory = _memory()
    for address in ADDRESSES:
        one = memory._rows(np.array([address], np.uint64), size)
        two = memory._rows(np.array([address, address], np.uint64), size)
        assert (one is None) == (two is None), (hex(address), size)
        if one is not None:
            assert one[0].shape == two[0].shape and one[0].dtype == two[0].dtype
            assert one[1].tolist() == two[1][:1].tolist() and one[1].dtype == two[1].dtype
            assert np.shares_memory(one[0], memory.buffers[0].data) or np.shares_memory(one[0], memory.buffers[1].data)


def test_a_one_thread_load_takes_the_scalar_shortcut(monkeypatch):
    """A one-address load and store is checked without np.searchsorted's vector search (the
    shortcut), and gives the bytes a plain slice of the buffer holds."""
    memory = _memory()

    def vector_search(*args, **kwargs):
        raise AssertionError("the one-address shortcut was not taken")
    monkeypatch.setattr(memory_module.np, "searchsorted", vector_search)
    words = memory.load(np.array([0x1048], np.uint64), 8, "k", 0x10, "LDG.E.64 R2, [R4.64]")
    assert words.tolist() == [np.arange(0x48, 0x50, dtype=np.uint8).view("<u4").tolist()]
    memory.store(np.array([0x1180], np.uint64), np.array([[0xDDCCBBAA]], np.uint32), "k", 0x20, "STG.E [R4.64], R2")
    assert memory.read(0x1180, 4) == bytes([0xAA, 0xBB, 0xCC, 0xDD])


def test_add64_without_a_carry_in_answers_as_with_a_zero_carry():
    from bobc.sim.executor import Launch
    launch = Launch.__new__(Launch)
    launch.threads = 4
    x = np.array([0, 1, 0xFFFFFFFFFFFFFFFF, 1 << 63], np.uint64)
    y = np.array([0, 0xFFFFFFFFFFFFFFFF, 1, 1 << 63], np.uint64)
    total, carry = Launch._add64(launch, x, y, np.uint64(0))
    vector = Launch._add64(launch, x, y, np.zeros(4, np.uint64))     # the general path: a carry per thread
    assert total.tolist() == vector[0].tolist() and carry.tolist() == vector[1].tolist()
    assert carry.tolist() == [False, True, True, True]      # by hand: 2^64 or more wraps


def test_each_opcode_is_looked_up_once_a_launch(monkeypatch):
    """execute() finds an opcode's handler once a launch (it looked it up by name at every issue)."""
    from bobc.sim import executor
    from bobc.sim.kernel import run_kernel
    looked = []

    def counting(obj, name, *default):
        if name.startswith("op_"):
            looked.append(name)
        return getattr(obj, name, *default)
    monkeypatch.setattr(executor, "getattr", counting, raising=False)
    source = """
.kernel loop
.registers 8
    MOV R0, RZ
again:
    IADD3 R0, R0, 0x1, RZ
    ISETP.LT.U32.AND P0, PT, R0, 0x40, PT
    @P0 BRA again
    EXIT
"""
    run_kernel(source, "sm_90", (1,), (1,), b"")
    assert len(looked) == len(set(looked)), sorted(looked)


def test_one_lane_owner_is_its_blocks_first_resident():
    """Residency.owners for one addressing thread answers as for the same thread twice (the vector
    path): the resident its block's first access with the instruction touched."""
    from bobc.sim.memory import Residency
    one, two = Residency(3), Residency(3)
    for block, resident in ((1, 2), (1, 0), (0, 1), (2, 3), (1, 3), (0, 0)):
        one.lanes, two.lanes = np.array([block]), np.array([block, block])
        a = one.owners(0x30, np.array([resident], np.int64))
        b = two.owners(0x30, np.array([resident, resident], np.int64))
        assert a.tolist() == b[:1].tolist() and a.dtype == b.dtype
    assert one._owner[0x30].tolist() == [1, 2, 3]       # by hand: each block's first resident


def test_the_handler_cache_keeps_no_launch_alive(monkeypatch):
    """A launch is freed when its run ends, without waiting for the cyclic collector: the handler
    cache holds functions, not methods bound to the launch (a bound method there tied the launch to
    itself, and Bob's simulated run peaked 35 MB higher, bench/results/sim-small-s43.md)."""
    import gc
    import weakref

    from bobc.sim import executor
    from bobc.sim.kernel import run_kernel
    launches = []
    run = executor.Launch.run

    def keeping(self):
        launches.append(weakref.ref(self))
        return run(self)
    monkeypatch.setattr(executor.Launch, "run", keeping)
    source = """
.kernel loop
.registers 8
    MOV R0, RZ
again:
    IADD3 R0, R0, 0x1, RZ
    ISETP.LT.U32.AND P0, PT, R0, 0x4, PT
    @P0 BRA again
    EXIT
"""
    gc.collect()
    gc.disable()
    try:
        run_kernel(source, "sm_90", (1,), (1,), b"")
        assert launches and all(ref() is None for ref in launches)
    finally:
        gc.enable()
