"""Edges of the shared-memory carve-out (encode.shared_carveout) that session 42's mutation testing
(notes/s42/probe-mutants7.md) found no test held.  Expected values worked by hand from the rules
the function's docstring states and CUDA's occupancy rules (cuda_occupancy.h): a block takes whole
warps (cudaOccMaxBlocksPerSMWarpsLimit divides the block size by the warp size rounding up), its
shared memory in SHARED_MEMORY_SIZE's 256-byte units plus the 1 KiB the system reserves, and a
block has at most 1024 threads (the Programming Guide's "Compute Capabilities" table)."""
from __future__ import annotations

import pytest

from bobc.errors import BobcError
from bobc.nvidia.encode import Carveout, shared_carveout
from bobc.targets import SM86, SM90


def test_a_block_of_part_of_a_warp_takes_the_whole_warp():
    # 520 threads are 17 warps (544 threads' room): sm_86's 1536 threads hold 1536 // 544 = 2 blocks
    # (16 whole warps, 512 threads, would hold 3).  Registers: 32 a thread is 1024 a warp, a
    # sub-partition's 16384 hold 16 warps, 4 x 16 // 17 = 3 blocks; slots 16.  Each block is the
    # 1 KiB reserve: the 8 KiB step holds both.
    assert shared_carveout(SM86, 520, 32, 0) == Carveout(smallest=8, chosen=8, largest=100, blocks=2)


def test_shared_memory_counts_in_256_byte_units():
    # 4400 bytes declared are 18 units, 4608 bytes, + 1024 = 5632 a block.  sm_86 holds 12 blocks of
    # 128 threads (1536 // 128; registers: 32 x 32 = 1024 a warp, 4 x 16 // 4 = 16; slots 16).
    # 12 x 5632 = 67584 bytes, more than the 64 KiB step (65536): 100 KiB.  Counting the 4400 bytes
    # as they are (5424 a block, 12 x 5424 = 65088) would take 64 KiB, and run blocks on memory
    # SHARED_MEMORY_SIZE does not give them.
    assert shared_carveout(SM86, 128, 32, 4400) == Carveout(smallest=8, chosen=100, largest=100, blocks=12)
    # 4352 (17 units exactly): 5376 a block, 12 x 5376 = 64512 fits 64 KiB
    assert shared_carveout(SM86, 128, 32, 4352).chosen == 64


@pytest.mark.parametrize("target", [SM86, SM90], ids=["sm_86", "sm_90"])
def test_a_block_has_at_most_1024_threads(target):
    assert shared_carveout(target, 1024, 32, 0).blocks == target.sm_resources.threads // 1024
    with pytest.raises(BobcError, match="at most 1024 threads"):
        shared_carveout(target, 1025, 32, 0)
