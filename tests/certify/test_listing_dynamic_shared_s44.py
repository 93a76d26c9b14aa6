"""The refusal of a region below a listing's .nv.shared section says that a PTX `.extern .shared` array
lies past the section, its bytes the region's to add (probe s44 listingattrs, finding 3).

A kernel of `.extern .shared .b8 dyn[]` (CUDA's dynamic shared memory) indexes bytes after the
static section, whose size the launch gives (CUDA Programming Guide, "shared": the size of an
extern array is the launch's dynamic shared memory size).  ptxas writes the kernel's section as for
no such array (empty on sm_86; on sm_90 the 1024 bytes the system keeps, the array from 0x400 --
the oracle is ptxas's own listing below), so the certifier cannot size the array.  Its hint said
"give the region at least 1024 bytes", and a region of 1024 was certified while the STS of thread
i wrote byte 0x400 + 4i, past the block's shared memory: the hint now names the array's bytes too.
"""
from __future__ import annotations

import re
import subprocess
from types import SimpleNamespace

import pytest

from bobc.certify import _shared_findings
from bobc.nvtools import nvdisasm, ptxas
from bobc.targets import SM90

PTX = """.version 8.0
.target sm_90
.address_size 64
.extern .shared .align 4 .b8 dyn[];
.visible .entry spill(.param .u64 out)
{
  .reg .u32 %t, %a, %b;
  mov.u32 %t, %tid.x;
  shl.b32 %a, %t, 2;
  mov.u32 %b, dyn;
  add.u32 %a, %a, %b;
  st.shared.u32 [%a], %t;
  ret;
}
"""


def test_the_hint_for_a_listing_names_the_extern_shared_bytes_past_its_section(tmp_path):
    if ptxas() is None or nvdisasm() is None:
        pytest.skip("ptxas / nvdisasm not installed (pip install nvidia-cuda-nvcc nvidia-cuda-nvdisasm)")
    ptx, cubin = tmp_path / "k.ptx", tmp_path / "k.cubin"
    ptx.write_text(PTX)
    subprocess.run([ptxas(), "-arch=sm_90", "-O3", "-o", str(cubin), str(ptx)], check=True, capture_output=True)
    listing = subprocess.run([nvdisasm(), "-hex", str(cubin)], check=True, capture_output=True, text=True).stdout
    # ptxas's own code: the array starts where the section ends, at 0x400
    assert re.search(r"\.section\s+\.nv\.shared\.spill,.*?\.zero\s+1024\b", listing, re.S)
    assert "UMOV UR4, 0x400" in listing
    source = tmp_path / "spill.sass"
    source.write_text("//@ param 0 unused\n" + listing)
    found = _shared_findings(SimpleNamespace(identity=b"spill", shared_bytes=0, at=None), source, SM90)
    assert len(found) == 1
    assert found[0].hint.startswith("give the region at least 1024 bytes of shared memory, and past them the bytes "
                                    "of any .extern .shared array its code indexes")


def test_a_hand_written_sources_hint_is_its_declaration(tmp_path):
    source = tmp_path / "k.sass"
    source.write_text(".kernel k\n.registers 8\n.shared 256\n    EXIT\n")
    found = _shared_findings(SimpleNamespace(identity=b"k", shared_bytes=0, at=None), source, SM90)
    assert len(found) == 1 and found[0].hint.startswith("give the region at least 256 bytes of shared memory: its")
