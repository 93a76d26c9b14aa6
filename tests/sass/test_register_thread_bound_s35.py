"""The most threads a cubin's kernel may be launched with at its register count (probe s35 sm86limits).

NVIDIA's cuda_occupancy.h (cudaOccMaxBlocksPerSMRegsLimit): a warp is allocated ceil(registers x 32 /
256) x 256 registers in one of the SM's 4 sub-partitions, and the GPU's launch check counts a block's
warps rounded up to a multiple of 4 against the 65,536 registers a block may have.  So the most warps
are floor(16,384 / a warp's registers) x 4 (72 registers: 7 x 4 = 28 warps, 896 threads; 80: 768; 96:
640; 104: 512; 255: 256) -- not floor(65,536 / a warp's registers) (80: 25 warps, 800 threads, which
the GPU does not launch).  Worked by hand from those rules.
"""
from __future__ import annotations

import pytest

from bobc.cli import main
from bobc.sass.cubin import register_thread_bound
from bobc.targets import TARGETS

BOUNDS = [(16, 1024), (64, 1024), (72, 896), (80, 768), (96, 640), (104, 512), (168, 384), (200, 256), (255, 256)]


@pytest.mark.parametrize("target", TARGETS.values(), ids=lambda t: t.name)
@pytest.mark.parametrize("registers, threads", BOUNDS)
def test_the_bound_is_whole_warps_in_each_sub_partition(target, registers, threads):
    assert register_thread_bound(registers, target) == threads


def test_a_block_the_gpu_does_not_launch_is_refused_by_asm(tmp_path, capsys):
    source = tmp_path / "k.sass"
    source.write_text(".kernel big\n    MOV R77, RZ\n    STG.E [R2.64], R77\n    EXIT\n")
    out = tmp_path / "k.cubin"
    # R77 is the highest register: 78 + the 2 reserved = 80 registers a thread
    assert main(["asm", str(source), "--arch", "sm_86", "--cubin", "-o", str(out), "--block-size", "768"]) == 0
    capsys.readouterr()
    assert main(["asm", str(source), "--arch", "sm_86", "--cubin", "-o", str(out), "--block-size", "800"]) == 1
    err = capsys.readouterr().err
    assert "declares blocks of 800 threads" in err and "holds at most 768" in err
