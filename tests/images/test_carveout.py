"""The shared-memory carve-out each QMD asks for (encode.shared_carveout).

The expected numbers are worked by hand from CUDA's occupancy rules (the Programming
Guide's "Compute Capabilities" table and its occupancy calculator): resident blocks are
bounded by threads per SM, registers per SM (allocated per warp in units of 256), block
slots, and shared memory, each block taking its own declared bytes plus a 1 KiB system reserve
(cuda_occupancy.h cudaOccMaxBlocksPerSMSmemLimit), counted once: the QMD's 1 KiB floor is that reserve.
"""
from __future__ import annotations

import pytest

import synthetic_bob as bob
from bobc.errors import BobcError
from bobc.nvidia import qmd
from bobc.nvidia.encode import (Carveout, encode_images, qmd_registers, shared_carveout, shared_memory_bytes,
                                sm_config)
from bobc.targets import SM86, SM90

PRODUCT_BLOCK = (128, 96, 40960)       # 4 warps, 96 registers, a 4-stage tile ring and the system KiB


def test_a_product_block_on_sm90_gets_five_blocks_at_228_kib():
    # registers: 96 * 32 = 3072 a warp, 65536 // 3072 = 21 warps = 5 blocks of 4 warps;
    # threads allow 16, slots 32.  On sm_90 the declaration's first KiB is the system's reserve
    # (39 KiB of the block's own + 1 KiB, counted once: s42), so five blocks take 200 KiB: more
    # than the 196 KiB step, so 228.  One block (40 KiB) needs the 64 KiB step.
    assert shared_carveout(SM90, *PRODUCT_BLOCK) == Carveout(smallest=64, chosen=228, largest=228, blocks=5)


def test_a_product_block_on_sm86_is_held_to_two_by_the_100_kib_ceiling():
    # registers allow 5 as on sm_90, threads 1536 // 128 = 12; 100 KiB holds 102400 // 41984 = 2
    assert shared_carveout(SM86, *PRODUCT_BLOCK) == Carveout(smallest=64, chosen=100, largest=100, blocks=2)


@pytest.mark.parametrize("target, blocks, kib", [(SM90, 8, 8), (SM86, 6, 8)], ids=["sm_90", "sm_86"])
def test_a_block_without_shared_memory_takes_a_small_step(target, blocks, kib):
    # 256 threads of 32 registers: sm_90 threads 2048 // 256 = 8, registers 65536 // 1024 // 8 = 8;
    # sm_86 threads 1536 // 256 = 6.  Each block is the 1 KiB reserve, which the QMD's 1 KiB floor
    # is (CUDA's QMD for such a kernel: tests/images/test_carveout_cuda_s37.py)
    chosen = shared_carveout(target, 256, 32, 0)
    assert (chosen.smallest, chosen.chosen, chosen.blocks) == (8, kib, blocks)


def test_one_resident_block_needs_no_more_than_the_least_step():
    # 1024 threads on sm_86: 1536 // 1024 = 1 block, whatever the carve-out
    assert shared_carveout(SM86, 1024, 24, 0) == Carveout(8, 8, 100, 1)


def test_small_blocks_are_bounded_by_block_slots():
    # 32 threads: sm_90's 32 slots bind first (threads would allow 64): 32 * 1 KiB = 32 KiB, as CUDA
    # asks on the H200 (bench/results/cuda-launch-probe-h200-decoded.txt: TARGET 0x9)
    assert shared_carveout(SM90, 32, 16, 0).chosen == 32
    assert shared_carveout(SM86, 32, 16, 0).chosen == 16     # 16 slots


@pytest.mark.parametrize("target, threads, registers, shared, what", [
    (SM90, 1024, 128, 1024, "65536 registers"),          # 4096 a warp: 16 warps of the block's 32
    (SM90, 128, 32, 230 * 1024, "228 KiB"),
    (SM86, 128, 32, 100 * 1024, "100 KiB"),                # + the reserve: more than the SM has
], ids=["registers", "shared-sm_90", "shared-sm_86"])
def test_a_block_that_cannot_reside_is_refused_by_name(target, threads, registers, shared, what):
    with pytest.raises(BobcError) as refused:
        shared_carveout(target, threads, registers, shared)
    assert "does not fit one" in str(refused.value) and what in str(refused.value)


def test_the_fields_count_4_kib_units_plus_one():
    # open-gpu-doc's fields; tinygrad and NVK write 100 KiB as 0x1A
    assert (sm_config(100), sm_config(32), sm_config(228), sm_config(8)) == (0x1A, 0x9, 0x3A, 0x3)


@pytest.mark.parametrize("target, largest", [(SM86, 0x1A), (SM90, 0x3A)], ids=["sm_86", "sm_90"])
def test_every_qmd_asks_for_its_launchs_carveout(target, largest):
    plan = bob.bob_whole_program_plan()
    images = encode_images(plan, target)
    slot = target.qmd_record_bytes
    for index, launch in enumerate(plan.launches):
        region = plan.regions[launch.region]
        fields = qmd.decode_dict(target.qmd_layout, images.qmd[index * slot:(index + 1) * slot])
        threads = launch.block[0] * launch.block[1] * launch.block[2]
        expected = shared_carveout(target, threads, qmd_registers(region.registers, target), region.shared_bytes)
        assert fields["SHARED_MEMORY_SIZE"] == shared_memory_bytes(region.shared_bytes)
        assert fields["MAX_SM_CONFIG_SHARED_MEM_SIZE"] == largest
        assert fields["MIN_SM_CONFIG_SHARED_MEM_SIZE"] == sm_config(expected.smallest)
        assert fields["TARGET_SM_CONFIG_SHARED_MEM_SIZE"] == sm_config(expected.chosen)
        assert expected.smallest <= expected.chosen <= expected.largest
