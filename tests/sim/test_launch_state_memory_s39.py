"""A launch's per-thread state holds what its kernel uses, and none of it outlives the launch
(probe s39 simmem): the uniform register file was 64 rows of every thread (203 MB of an
830,976-thread launch, the largest of a simulated Coppelius update, whose peak was 1.1 GB) and
the special registers nine int64 columns (57 MB), whatever the kernel read.  Now a row is made
when the kernel first reads or writes it, with the value the full file held (POISON_WORD)."""
from __future__ import annotations

import gc
import sys
import weakref
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
from ptx_kernels import kernel  # noqa: E402

from bobc.sim import executor  # noqa: E402
from bobc.sim.kernel import run_kernel  # noqa: E402


def test_a_row_reads_as_the_full_file_did_and_keeps_its_writes():
    rows = executor.LazyRows(64, 5, executor.POISON_WORD, np.uint32)
    full = np.full((64, 5), executor.POISON_WORD, dtype=np.uint32)
    assert rows.made() == 0
    assert np.array_equal(rows[7], full[7]) and rows[7].dtype == full.dtype
    rows[3][1:3] = 9
    full[3][1:3] = 9
    assert np.array_equal(rows[3], full[3]) and np.array_equal(rows[-1], full[-1])
    assert rows.made() == 3
    with pytest.raises(IndexError):
        rows[64]


def test_a_launch_makes_only_the_registers_its_kernel_touches_and_is_freed_when_it_ends(monkeypatch):
    seen = []
    real_run = executor.Launch.run

    def run(self):
        try:
            return real_run(self)
        finally:
            seen.append((weakref.ref(self), self.uregs.made(), self.sregs.made()))
    monkeypatch.setattr(executor.Launch, "run", run)
    data = np.arange(256, dtype=np.float32)
    gc.disable()        # freed by reference counting: no cycle keeps a launch's arrays until a collection
    try:
        run_kernel(kernel("block_reduce", "sm_90"), "sm_90", grid=(2, 1, 1), block=(128, 1, 1),
                         params=["out", "in"], buffers={"out": np.zeros(2, np.float32), "in": data})
        (alive, uregs, sregs), = seen
        assert alive() is None
    finally:
        gc.enable()
    assert uregs < 64
    assert 0 < len(sregs) < 9 and "SR_TID.X" in sregs


def test_the_order_check_lets_go_of_the_words_a_launch_gathered_once_merged():
    from bobc.sim.memory import LaunchAccesses

    accesses = LaunchAccesses()
    accesses.read(np.array([8, 4, 8], dtype=np.uint64), 4)
    accesses.read(np.array([16], dtype=np.uint64), 8)
    accesses.write(np.array([4], dtype=np.uint64), 2)
    gathered = [weakref.ref(part) for part in accesses._reads + accesses._writes]
    reads, writes = accesses.sets()
    assert [part() for part in gathered] == [None, None, None]     # only the merged sets are held
    assert reads.tolist() == [1, 2, 4, 5] and writes.tolist() == [1]
    again = accesses.sets()                                         # asking twice answers the same
    assert again[0].tolist() == [1, 2, 4, 5] and again[1].tolist() == [1]


def test_an_aligned_load_and_store_move_whole_rows_and_agree_with_bytewise_indexing():
    from bobc.sim.memory import Buffer, Memory, Resident

    data = np.arange(256, dtype=np.uint8)
    memory = Memory([Buffer("b", 0x1000, data.copy())], [Resident("b", 0x1000, 256)])
    addresses = np.array([0x1010, 0x1000, 0x10F0, 0x1010], dtype=np.uint64)
    table, rows = memory._rows(addresses, 16)          # one buffer, aligned: rows, no index matrix
    assert rows.tolist() == [1, 0, 15, 1] and table.base is not None
    got = memory.load(addresses, 16, "l", 0, "a load")
    want = data[(addresses - 0x1000).astype(np.int64)[:, None] + np.arange(16)].view("<u4")
    assert np.array_equal(got, want)
    words = np.arange(16, dtype=np.uint32).reshape(4, 4) + 1000
    memory.store(addresses, words, "l", 0, "a store")
    expect = data.copy()
    for address, row in zip(addresses, words):          # one thread after another: the last one wins
        expect[int(address) - 0x1000:int(address) - 0x1000 + 16] = row.view(np.uint8)
    assert np.array_equal(memory.buffers[0].data, expect)
    assert memory._rows(np.array([0x1004], dtype=np.uint64), 16) is None     # not a row: bytewise
