"""Where a block's own shared memory starts, per target (bobc.targets SMResources.shared_base), held
to ptxas's own placement (probe s41 smem400).

The oracle is NVIDIA's ptxas 13.x: a kernel with one 256-byte `.shared` variable and dynamic
(`.extern .shared`) memory.  -arch=sm_90 makes .nv.shared.<k> 0x400 bytes larger than the
variable (the system's first KiB sits below the kernel's bytes: %reserved_smem_offset_begin /
_end compile to 0 / 0x400) and writes a .nv.shared.reserved.0 section; -arch=sm_86 makes it the
variable's 256 bytes, from 0 (its reserve lies at the window's top: %reserved_smem_offset_begin is
SR_SMEMSZ less c[0x0][0x114]).  Dynamic memory follows the static in both (at base + 256)."""
from __future__ import annotations

import re
import struct
import subprocess

import pytest

from bobc.nvtools import nvdisasm, ptxas
from bobc.targets import TARGETS

PTX = """.version 8.0
.target {arch}
.address_size 64
.shared .align 4 .b8 sa[256];
.extern .shared .align 16 .b8 dyn[];
.visible .entry k(.param .u64 p)
{{
  .reg .u32 r<6>; .reg .u64 d<2>;
  mov.u32 r1, %tid.x;
  mov.u32 r3, sa;
  st.shared.u32 [r3], r1;
  mov.u32 r4, dyn;
  st.shared.u32 [r4], r1;
  bar.sync 0;
  ld.shared.u32 r5, [r3+4];
  ld.param.u64 d1, [p];
  cvta.to.global.u64 d1, d1;
  st.global.u32 [d1], r5;
  mov.u32 r5, %reserved_smem_offset_end;
  st.global.u32 [d1+4], r5;
  ret;
}}
"""


def _sections(elf: bytes) -> dict[str, int]:
    """name -> size of each section of a 64-bit little-endian ELF (the ELF-64 spec's headers)."""
    shoff, = struct.unpack_from("<Q", elf, 0x28)
    shentsize, shnum, shstrndx = struct.unpack_from("<HHH", elf, 0x3A)
    headers = [struct.unpack_from("<IIQQQQIIQQ", elf, shoff + k * shentsize) for k in range(shnum)]
    strtab = headers[shstrndx][4]
    name = lambda at: elf[strtab + at:elf.index(b"\0", strtab + at)].decode()
    return {name(h[0]): h[5] for h in headers}


@pytest.mark.parametrize("target", ["sm_86", "sm_90"])
def test_ptxas_places_a_kernels_shared_memory_from_the_targets_shared_base(target, tmp_path, needs_ptxas):
    source, cubin = tmp_path / "k.ptx", tmp_path / "k.cubin"
    source.write_text(PTX.format(arch=target))
    subprocess.run([ptxas(), f"-arch={target}", "-o", str(cubin), str(source)], check=True, capture_output=True)
    sections = _sections(cubin.read_bytes())
    base = TARGETS[target].sm_resources.shared_base
    assert sections[".nv.shared.k"] == base + 256, sections       # the system's bytes, then the variable
    assert (".nv.shared.reserved.0" in sections) == (base > 0), sections
    if nvdisasm() is not None:
        text = subprocess.run([nvdisasm(), "-c", str(cubin)], check=True, capture_output=True, text=True).stdout
        if not base:
            # the variable at 0 (ptxas folds its address into the STS), dynamic memory right after it
            assert re.search(r"STS \[RZ\], ", text) and re.search(r"STS \[0x100\], ", text), text
        else:
            # the variable's address is the base, the block's cluster rank added in the top byte
            # (UMOV URn, 0x400; ULEA URn, rank, URn, 0x18), dynamic memory 0x100 past it
            moved = re.search(rf"UMOV UR(\d+), {base:#x} ;", text)
            assert moved, text
            assert re.search(rf"STS \[UR{moved.group(1)}\], ", text), text
            assert re.search(rf"STS \[UR{moved.group(1)}\+0x100\], ", text), text
