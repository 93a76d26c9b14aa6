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


def _starved_kernel(threads: int, arch: str, live: int = 150) -> str:
    """PTX of a kernel holding `live` floats at once, capped by .maxntid `threads`: ptxas gives it as
    many registers as a block of `threads` threads may have."""
    lines = [".version 8.0", f".target {arch}", ".address_size 64", "",
             ".visible .entry k(.param .u64 p)", f".maxntid {threads}, 1, 1", "{",
             "  .reg .u64 %a;", f"  .reg .f32 %f<{live + 2}>;", "  ld.param.u64 %a, [p];", "  cvta.to.global.u64 %a, %a;"]
    lines += [f"  ld.global.volatile.f32 %f{i}, [%a+{4 * i}];" for i in range(live)]
    lines += [f"  st.global.volatile.f32 [%a+{4 * (i + live)}], %f{live - 1 - i};" for i in range(live)]
    return "\n".join(lines + ["  ret;", "}"]) + "\n"


@pytest.mark.parametrize("arch, threads", [("sm_86", 1024), ("sm_86", 896), ("sm_86", 800), ("sm_90", 1024),
                                           ("sm_90", 896)])
def test_ptxas_gives_a_block_of_n_threads_the_registers_the_bound_allows(tmp_path, needs_ptxas, arch, threads):
    # NVIDIA's own oracle: ptxas 13's -v of a kernel that wants more registers than .maxntid N leaves it
    # uses the most registers at which N threads launch (800 threads: 72, not the 80 that 65,536 / 800
    # gives).  Where ptxas chooses fewer (sm_90 at 800: 32, spilling instead) it says nothing of the bound,
    # so those cases are not listed.
    target = TARGETS[arch]
    import re
    import subprocess

    from bobc.nvtools import ptxas
    source = tmp_path / "k.ptx"
    source.write_text(_starved_kernel(threads, target.ptxas_arch))
    done = subprocess.run([ptxas(), f"-arch={target.ptxas_arch}", "-v", str(source), "-o", str(tmp_path / "k.cubin")],
                          capture_output=True, text=True, check=True)
    used = int(re.search(r"Used (\d+) registers", done.stdout + done.stderr).group(1))
    most = max(r for r in range(1, 256) if register_thread_bound(r, target) >= threads)
    assert used == most
