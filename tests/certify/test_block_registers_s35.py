"""A block's registers as the GPU's launch check counts them (probe s35 sm86limits, finding 1).

NVIDIA's occupancy header (cuda_occupancy.h, cudaOccMaxBlocksPerSMRegsLimit; CUDA 11 for 8.6 and
12.6 for 9.0): an SM's 65,536 registers lie in 4 sub-partitions of 16,384, a warp is allocated
ceil(registers x 32 / 256) x 256 of them in one sub-partition, and "Hardware verifies if a launch
fits the per-CTA register limit ... the warp allocation needs to be rounded up to the number of
partitions": a block is launched only if warp registers x (its warps rounded up to a multiple of 4)
<= 65,536 (regsPerBlock, the Programming Guide's 64 K registers a block).  So 800 threads of 80
registers (25 warps of 2,560: 28 x 2,560 = 71,680) do not launch, although 800 x 80 = 64,000 is
under 65,536; 768 threads (24 warps: 61,440) do.  The numbers below are worked by hand from those rules.
"""
from __future__ import annotations

import dataclasses
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "images"))
import synthetic_bob as bob  # noqa: E402
from bobc.certify import findings  # noqa: E402
from bobc.errors import BobcError  # noqa: E402
from bobc.nvidia.encode import encode_images, shared_carveout  # noqa: E402
from bobc.targets import SM86, SM90  # noqa: E402

TARGETS = [SM86, SM90]


def with_block(plan, region_index, threads, registers):
    """`plan` (a bob Plan) with region `region_index` declaring `threads` x `registers`, its launches alike."""
    program = plan.program
    regions = list(program.regions)
    regions[region_index] = dataclasses.replace(regions[region_index], registers=registers, block_x=threads)
    launches = tuple(dataclasses.replace(l, block=(threads, 1, 1)) if l.region == region_index else l
                     for l in program.launches)
    return dataclasses.replace(plan, program=dataclasses.replace(program, regions=tuple(regions), launches=launches))


# (threads, registers, what the launch check counts): 25 warps of 2,560 -> 28 x 2,560; 10 of 6,400 -> 12 x;
# 21 of 3,072 -> 24 x; 29 warps (900 threads) of 2,304 -> 32 x
REFUSED = [(800, 80, 71_680), (320, 200, 76_800), (672, 96, 73_728), (900, 72, 73_728)]
# 24 warps of 2,560 = 61,440; 32 of 2,048 = 65,536; 12 of 5,376 = 64,512
LAUNCHED = [(768, 80), (1024, 64), (384, 168)]


@pytest.mark.parametrize("target", TARGETS, ids=lambda t: t.name)
@pytest.mark.parametrize("threads, registers, counted", REFUSED)
def test_the_certifier_refuses_a_block_the_gpu_does_not_launch(target, threads, registers, counted):
    plan = with_block(bob.bob_plan(), 0, threads, registers)
    found = [f.message for f in findings(plan, target)]
    region = [m for m in found if m.startswith("region bob-row-gather: ")]
    assert len(region) == 1, found
    assert f"{threads} threads of {registers} registers take {counted:,} registers" in region[0]
    assert "more than the 65,536 a block may have" in region[0] and target.name in region[0]
    launches = [m for m in found if "(bob-row-gather): block" in m]
    assert launches and all(f"take {counted:,} registers" in m for m in launches)


@pytest.mark.parametrize("target", TARGETS, ids=lambda t: t.name)
@pytest.mark.parametrize("threads, registers", LAUNCHED)
def test_the_certifier_accepts_a_block_the_gpu_launches(target, threads, registers):
    plan = with_block(bob.bob_plan(), 0, threads, registers)
    assert [f.message for f in findings(plan, target) if "registers" in f.message] == []


@pytest.mark.parametrize("target", TARGETS, ids=lambda t: t.name)
@pytest.mark.parametrize("threads, registers, counted", REFUSED)
def test_the_encoder_refuses_it_naming_the_launch(target, threads, registers, counted):
    plan = bob.bob_whole_program_plan()
    index = plan.launches[0].region
    regions = list(plan.regions)
    regions[index] = dataclasses.replace(regions[index], registers=registers, block_x=threads)
    launches = tuple(dataclasses.replace(l, block=(threads, 1, 1)) if l.region == index else l for l in plan.launches)
    broken = dataclasses.replace(plan, regions=tuple(regions), launches=launches)
    with pytest.raises(BobcError) as refused:
        encode_images(broken, target)
    text = str(refused.value)
    assert text.startswith(f"launch 0 ({plan.launches[0].identity}): a block of {threads} threads")
    assert f"take {counted} registers, more than the 65536 registers a block may have" in text


@pytest.mark.parametrize("target", TARGETS, ids=lambda t: t.name)
def test_residency_counts_whole_warps_in_each_sub_partition(target):
    # 200 registers: 6,400 a warp, 16,384 // 6,400 = 2 warps a sub-partition, 8 an SM: one block of 8 warps
    # (256 threads), none of 9 (288 threads: 12 counted x 6,400 = 76,800)
    assert shared_carveout(target, 256, 200, 1024).blocks == 1
    with pytest.raises(BobcError, match="take 76800 registers"):
        shared_carveout(target, 288, 200, 1024)
    # 48 registers: 1,536 a warp, 10 a sub-partition, 40 an SM: 5 blocks of 8 warps (65,536 // 1,536 // 8 too)
    assert shared_carveout(target, 256, 48, 1024).blocks == 5


@pytest.mark.parametrize("target", TARGETS, ids=lambda t: t.name)
def test_a_launch_past_1024_threads_names_that_bound(target):
    # probe s35 sm86limits finding 3: the launch's fault said "does not fit one SM"; the bound it breaks is
    # the Programming Guide's 1,024 threads a block
    plan = with_block(bob.bob_plan(), 0, 1056, 16)
    launches = [f.message for f in findings(plan, target) if "(bob-row-gather): block" in f.message]
    assert launches and all("has 1056 threads; the hardware allows 1..1024 per block" in m for m in launches)


@pytest.mark.parametrize("target", TARGETS, ids=lambda t: t.name)
def test_the_encoder_names_the_thread_bound_for_a_block_past_it(target):
    # 2,048 threads of 16 registers: 64 warps of 512 = 32,768 registers fit; the 1,024 threads a block do not
    # (the refusal once said 32,768 registers were more than 65,536)
    with pytest.raises(BobcError) as refused:
        shared_carveout(target, 2048, 16, 1024)
    assert "a block may have at most 1024 threads" in str(refused.value)
    assert "registers a block may have" not in str(refused.value)


def test_the_encoder_names_the_launch_whose_shared_memory_does_not_fit_sm_86():
    # 100 KiB a block + the 1 KiB reserve: past sm_86's 100 KiB carve-out (99 KiB a block); sm_90 holds it
    plan = bob.bob_whole_program_plan()
    index = plan.launches[0].region
    regions = list(plan.regions)
    regions[index] = dataclasses.replace(regions[index], shared_bytes=100 * 1024)
    broken = dataclasses.replace(plan, regions=tuple(regions))
    with pytest.raises(BobcError) as refused:
        encode_images(broken, SM86)
    assert str(refused.value).startswith(f"launch 0 ({plan.launches[0].identity}): a block of ")
    assert "more than the SM's 100 KiB" in str(refused.value)
    encode_images(broken, SM90)
