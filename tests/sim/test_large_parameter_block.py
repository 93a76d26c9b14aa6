"""run_kernel places a launch's parameters where the kernel's code reads them.

ptxas 13.5 -arch=sm_86 keeps a parameter block of more than 4352 bytes at c[0x0][0x1a80], not at
0x160 (its PARAM_CBANK; bobc.targets CubinFacts.large_parameter_base), and its code reads the
parameters there.  The simulator put every block at 0x160, so such code read bytes no parameter
was in (a fault: "past the ... parameter bytes the launch was given").  Here ptxas's own code of
a kernel that stores parameter words to memory is run from its cubin, from nvdisasm's listing of
it, and from the cubin `bobc asm --cubin` writes of that listing: each must store the parameters'
values.  A small block, and sm_90 (whose block stays at 0x210), are run alike.  (A plan's launch is
not this path: its QMD places bank 0, bobc.sim.invocation.)
"""
from __future__ import annotations

import subprocess

import numpy as np
import pytest

from bobc.cli import main
from bobc.nvtools import nvdisasm, ptxas
from bobc.sim.kernel import Pointer, run_kernel

PTX = """.version 8.8
.target {arch}
.address_size 64
.visible .entry k(
    .param .u64 out,
    .param .align 4 .b8 big[{size}]
)
{{
    .reg .b32 r<4>;
    .reg .b64 rd<4>;
    ld.param.u64 rd1, [out];
    ld.param.u32 r1, [big];
    ld.param.u32 r2, [big+{last}];
    cvta.to.global.u64 rd2, rd1;
    st.global.u32 [rd2], r1;
{last_store}
    ret;
}}
"""


@pytest.fixture
def needs_tools():
    try:
        subprocess.run([ptxas(), "--version"], check=True, capture_output=True)
        subprocess.run([nvdisasm(), "--version"], check=True, capture_output=True)
    except (OSError, subprocess.CalledProcessError, FileNotFoundError) as problem:
        pytest.skip(f"ptxas / nvdisasm not usable: {problem}")


def _images(tmp_path, arch: str, size: int, last_word: bool = True):
    """ptxas's cubin, nvdisasm's listing of it and bobc's cubin of that listing (of a kernel that
    stores big's first word and, with `last_word`, its last)."""
    source, cubin = tmp_path / "k.ptx", tmp_path / "k.cubin"
    last_store = "    st.global.u32 [rd2+4], r2;" if last_word else ""
    source.write_text(PTX.format(arch=arch, size=size, last=size - 4, last_store=last_store))
    subprocess.run([ptxas(), f"-arch={arch}", "-o", str(cubin), str(source)], check=True, capture_output=True)
    listing = subprocess.run([nvdisasm(), "-hex", str(cubin)], check=True, capture_output=True, text=True).stdout
    (tmp_path / "k.sass").write_text(listing)
    ours = tmp_path / "ours.cubin"
    assert main(["asm", str(tmp_path / "k.sass"), "--arch", arch, "--cubin", "-o", str(ours)]) == 0
    return cubin.read_bytes(), listing, ours.read_bytes()


@pytest.mark.parametrize("arch, size, base", [("sm_86", 4400, "0x1a80"), ("sm_86", 8000, "0x1a80"),
                                              ("sm_86", 64, "0x160"), ("sm_90", 4400, "0x210")])
def test_the_code_reads_the_parameters_it_was_given(arch, size, base, tmp_path, needs_tools):
    ptxas_cubin, listing, bobc_cubin = _images(tmp_path, arch, size)
    assert f"c[0x0][{base}]" in listing         # the oracle: where ptxas's code reads big's first word
    block = np.arange(size // 4, dtype=np.uint32) * 0x01010101 + 0x11223344
    for kernel in (ptxas_cubin, listing, bobc_cubin):
        out = run_kernel(kernel, arch, grid=1, block=1, params=[Pointer("out"), block.tobytes()],
                         buffers={"out": np.zeros(2, np.uint32)})["out"]
        assert out.tolist() == [int(block[0]), int(block[-1])]


def test_a_short_block_is_placed_where_the_image_says(tmp_path, needs_tools):
    """A cubin's PARAM_CBANK (a listing's printed one) says where its block lives, whatever the bytes a
    caller passes: the code of a kernel of an 8-byte pointer and a 4400-byte array that reads the
    array's first word alone, given the pointer and that word (16 bytes, a block that would sit at
    0x160), reads it at 0x1a88, where the simulator puts it."""
    ptxas_cubin, listing, bobc_cubin = _images(tmp_path, "sm_86", 4400, last_word=False)
    assert "c[0x0][0x1a88]" in listing
    for kernel in (ptxas_cubin, listing, bobc_cubin):
        out = run_kernel(kernel, "sm_86", grid=1, block=1, params=[Pointer("out"), np.uint32(0xCAFE)],
                         buffers={"out": np.zeros(2, np.uint32)})["out"]
        assert out.tolist() == [0xCAFE, 0]
