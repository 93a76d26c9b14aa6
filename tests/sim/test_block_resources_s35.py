"""The simulator refuses a QMD whose block the GPU does not launch (probe s35 sm86limits finding 5).

The simulator stands in for an sm_86 GPU, which no machine here has; it ran a QMD of 800 threads of
80 registers (hand-edited images: `bobc sim --images` runs edited bytes) to the end, exit 0, where an
RTX card does not launch it: the GPU counts 25 warps of 2,560 registers as 28 (a multiple of its 4
sub-partitions), 71,680 registers, past the 65,536 a block may have (NVIDIA's cuda_occupancy.h,
cudaOccMaxBlocksPerSMRegsLimit).  Likewise a block of more than 1,024 threads, or of more shared memory
than 99 KiB on sm_86 (its 100 KiB carve-out less the 1 KiB reserve) or 227 KiB on sm_90 -- there
SHARED_MEMORY_SIZE 0x39000, the field holding the reserve too, as libcuda writes it (the kernel's bytes
+ 0x400: bench/results/cuda-launch-probe-h100-shared.md; s42).
"""
from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "images"))
import synthetic_bob as bob  # noqa: E402
from bobc.nvidia.encode import encode_images  # noqa: E402
from bobc.sim import qmd_fields  # noqa: E402
from bobc.sim.faults import SimulationFault  # noqa: E402
from bobc.sim.qmd_reader import read_launch  # noqa: E402
from bobc.targets import SM86, SM90  # noqa: E402

REGISTERS = {"V03_00": "REGISTER_COUNT_V", "V04_00": "REGISTER_COUNT"}


def put(raw: bytes, layout: str, name: str, value: int) -> bytes:
    high, low = qmd_fields.position(layout, name)
    bits = int.from_bytes(raw, "little")
    mask = ((1 << (high - low + 1)) - 1) << low
    return ((bits & ~mask) | (value << low)).to_bytes(len(raw), "little")


def first_qmd(target) -> bytes:
    images = encode_images(bob.bob_whole_program_plan(), target)
    return images.qmd[:target.qmd_record_bytes]


@pytest.mark.parametrize("target", [SM86, SM90], ids=lambda t: t.name)
def test_a_sound_qmd_is_read(target):
    raw = put(first_qmd(target), target.qmd_layout, "CTA_THREAD_DIMENSION0", 768)
    raw = put(raw, target.qmd_layout, REGISTERS[target.qmd_layout], 80)      # 24 warps of 2,560: 61,440
    assert read_launch(raw, target.compute_class, "here").block == (768, 1, 1)


@pytest.mark.parametrize("target", [SM86, SM90], ids=lambda t: t.name)
@pytest.mark.parametrize("field, value, registers, expected", [
    ("CTA_THREAD_DIMENSION0", 800, 80, "takes 71680 registers"),
    ("CTA_THREAD_DIMENSION0", 1056, 16, "has at most 1024 threads"),
])
def test_a_block_the_gpu_does_not_launch_is_a_fault(target, field, value, registers, expected):
    raw = put(first_qmd(target), target.qmd_layout, field, value)
    raw = put(raw, target.qmd_layout, REGISTERS[target.qmd_layout], registers)
    with pytest.raises(SimulationFault) as fault:
        read_launch(raw, target.compute_class, "launch here")
    assert str(fault.value).startswith("launch here: ") and expected in str(fault.value)


@pytest.mark.parametrize("target, most", [(SM86, 99 * 1024), (SM90, 227 * 1024 + 0x400)], ids=["sm_86", "sm_90"])
def test_shared_memory_past_a_blocks_share_is_a_fault(target, most):
    raw = put(first_qmd(target), target.qmd_layout, "SHARED_MEMORY_SIZE", most)
    read_launch(raw, target.compute_class, "here")
    raw = put(raw, target.qmd_layout, "SHARED_MEMORY_SIZE", most + 256)
    with pytest.raises(SimulationFault, match=f"SHARED_MEMORY_SIZE {most + 256} is more than the {most} bytes"):
        read_launch(raw, target.compute_class, "here")
