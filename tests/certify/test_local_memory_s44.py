"""A plan's kernel that accesses local memory (LDL / STL) is refused by the certifier at the access
(probe s44 newuser9, finding 7).

No plan host gives its launches local memory: the QMD's SHADER_LOCAL_MEMORY sizes are 0 and the local
window's backing is unset, so a local access faults (docs/ampere-path-comparison.md, "local memory
backing": "our kernels use none: base 0, so a stray local access faults").  ptxas puts a `.local`
array indexed by a value it cannot know in local memory; the listing of such a kernel was certified
and built, and only `bobc sim` stopped at the STL ("local memory is not modeled for this launch
(run_kernel(local_bytes=) gives a kernel some)").  The oracle that the listing uses local memory is
ptxas's own code (its STL), and the expected verdict follows from the host giving none.
"""
from __future__ import annotations

import subprocess
from types import SimpleNamespace

import pytest

from bobc.certify import _local_memory_findings
from bobc.nvtools import nvdisasm, ptxas
from bobc.targets import SM86, SM90

PTX = """.version 8.0
.target {arch}
.address_size 64
.visible .entry scratch(.param .u64 out, .param .u32 k)
{{
  .local .align 4 .b8 buf[128];
  .reg .u32 %t, %i, %v;
  .reg .u64 %o, %a, %l, %m;
  mov.u32 %t, %tid.x;
  mov.u64 %l, buf;
  and.b32 %i, %t, 31;
  mul.wide.u32 %o, %i, 4;
  add.u64 %m, %l, %o;
  st.local.u32 [%m], %t;
  ld.param.u32 %i, [k];
  and.b32 %i, %i, 31;
  mul.wide.u32 %o, %i, 4;
  add.u64 %m, %l, %o;
  ld.local.u32 %v, [%m];
  ld.param.u64 %a, [out];
  cvta.to.global.u64 %a, %a;
  mul.wide.u32 %o, %t, 4;
  add.u64 %a, %a, %o;
  st.global.u32 [%a], %v;
  ret;
}}
"""
TARGETS = {"sm_86": SM86, "sm_90": SM90}


@pytest.mark.parametrize("arch", sorted(TARGETS))
def test_a_listing_that_uses_local_memory_is_refused_at_its_first_access(tmp_path, arch):
    if ptxas() is None or nvdisasm() is None:
        pytest.skip("ptxas / nvdisasm not installed (pip install nvidia-cuda-nvcc nvidia-cuda-nvdisasm)")
    ptx, cubin = tmp_path / "k.ptx", tmp_path / "k.cubin"
    ptx.write_text(PTX.format(arch=arch))
    subprocess.run([ptxas(), f"-arch={arch}", "-O3", "-o", str(cubin), str(ptx)], check=True, capture_output=True)
    listing = subprocess.run([nvdisasm(), "-hex", str(cubin)], check=True, capture_output=True, text=True).stdout
    source = tmp_path / "scratch.sass"
    source.write_text("//@ param 0 pointer write 128 out\n//@ param 1 scalar k\n" + listing)
    line = next(n for n, row in enumerate(source.read_text().splitlines(), 1) if " STL " in row)   # ptxas's STL
    found = _local_memory_findings(SimpleNamespace(identity=b"scratch", at=None), source, TARGETS[arch])
    assert len(found) == 1
    assert found[0].message.startswith("kernel scratch accesses local memory (STL ")
    assert f"at scratch.sass:{line}), which no plan host gives its launches" in found[0].message
    assert found[0].at.line == line
    assert "registers or shared memory" in found[0].hint


def test_a_kernel_without_local_accesses_is_not_refused(tmp_path):
    # a label or comment naming STL is no access
    source = tmp_path / "k.sass"
    source.write_text("// STL-free: no LDL here\n.kernel k\n.registers 8\n    S2R R0, SR_TID.X\n    EXIT\n")
    assert _local_memory_findings(SimpleNamespace(identity=b"k", at=None), source, SM86) == []
    source.write_text(".kernel k\n.registers 8\n    STL [R1], RZ\n    @P0 LDL R2, [R1]\n    EXIT\n")
    found = _local_memory_findings(SimpleNamespace(identity=b"k", at=None), source, SM86)
    assert len(found) == 1 and "(STL [R1], RZ at k.sass:3)" in found[0].message
