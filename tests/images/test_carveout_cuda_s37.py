"""The carve-out counts a block's shared memory and the 1 KiB system reserve once (helper carveout, s37).

Independent source: the QMDs libcuda wrote on the H200 for an empty kernel (no shared memory,
64 threads, 16 registers; bench/results/cuda-launch-probe-h200-decoded.txt, session 17's probe:
six graph nodes and six stream launches).  CUDA writes SHARED_MEMORY_SIZE 0x400 -- the 1 KiB
reserve itself -- and TARGET_SM_CONFIG_SHARED_MEM_SIZE 0x9 (32 KiB): 32 resident blocks (sm_90's
block slots) of 1 KiB each, as cuda_occupancy.h's cudaOccMaxBlocksPerSMSmemLimit counts a block
(sharedSizeBytes + reservedSharedMemPerBlock + dynamic).  bobc once counted the field's 1 KiB
floor and the reserve both (2 KiB a block) and asked 64 KiB.
"""
from __future__ import annotations

import re
from pathlib import Path

import pytest

from bobc.nvidia.encode import grid_qmd, qmd_registers, shared_carveout, sm_config
from bobc.nvidia.qmd import decode_dict
from bobc.targets import SM86, SM90

DECODED = Path(__file__).resolve().parents[2] / "bench/results/cuda-launch-probe-h200-decoded.txt"


def cuda_grid_qmds() -> list[dict[str, int]]:
    """libcuda's grid QMDs (QMD_TYPE 2) of the probe's kernel, as decoded in the results file."""
    text = DECODED.read_text()
    found = []
    for block in text.split("== QMD at ")[1:]:
        fields = {name: int(value, 16) for name, value in re.findall(r"^  (\S+) = (0x[0-9a-f]+)$", block, re.M)}
        if fields.get("QMD_TYPE") == 2 and fields.get("CTA_THREAD_DIMENSION0", 0) > 1:
            found.append(fields)
    return found


def test_the_probe_recorded_cudas_grid_qmds():
    qmds = cuda_grid_qmds()
    assert len(qmds) == 13          # a 32-thread launch, the graph's six nodes, the six stream launches (64 threads)
    assert {q["SHARED_MEMORY_SIZE"] for q in qmds} == {0x400}


def test_sm90_asks_the_carveout_cuda_asks_for_a_kernel_without_shared_memory():
    for cuda in cuda_grid_qmds():
        block = (cuda["CTA_THREAD_DIMENSION0"], cuda["CTA_THREAD_DIMENSION1"], cuda["CTA_THREAD_DIMENSION2"])
        ours = decode_dict("V04_00", grid_qmd(SM90, "launch 0 (empty)", (cuda["GRID_WIDTH"], 1, 1), block,
                                              cuda["REGISTER_COUNT"], 0, 0x10_0000_0000, 0x100, 0x12_0000_0000,
                                              barriers=1))
        for name in ("SHARED_MEMORY_SIZE", "TARGET_SM_CONFIG_SHARED_MEM_SIZE", "MAX_SM_CONFIG_SHARED_MEM_SIZE"):
            assert ours[name] == cuda[name], (name, block, ours[name], cuda[name])


@pytest.mark.parametrize("target", [SM86, SM90], ids=["sm_86", "sm_90"])
def test_a_kibibyte_declared_takes_twice_what_none_takes(target):
    # the field floors both at 0x400, but a block with 1 KiB of its own takes 2 KiB with the reserve, one
    # with none 1 KiB (cuda_occupancy.h): 64-thread blocks fill the SM's block slots.  On sm_90 a block's
    # declaration begins with the reserve (its bytes from 0x400, as ptxas places them), so 1 KiB of its
    # own is declared 0x800, as libcuda's SHARED_MEMORY_SIZE for it would be (s42)
    slots = target.sm_resources.blocks
    own = {"sm_86": 1024, "sm_90": 0x400 + 1024}[target.name]
    none = shared_carveout(target, 64, qmd_registers(16, target), 0)
    one = shared_carveout(target, 64, qmd_registers(16, target), own)
    assert (none.blocks, one.blocks) == (slots, slots)
    assert (none.chosen, one.chosen) == (slots, 2 * slots)     # KiB: 16 / 32 on sm_86, 32 / 64 on sm_90
    assert sm_config(none.chosen) == {16: 0x5, 32: 0x9}[slots]
