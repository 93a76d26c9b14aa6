"""A kernel listing compiled with PTX `.reqntid X, Y, Z` runs only in blocks of that shape; a region or
launch of another block is refused (probe s44 newuser9, finding 6).

ptxas records `.reqntid` as the EIATTR_REQNTID of the cubin's .nv.info.<kernel> section and compiles the
code for it: the kernel below guards its store with `tid.x < 32`, and under `.reqntid 32` ptxas drops
that test (no ISETP in its code -- checked here, the oracle being ptxas's own output).  The CUDA driver
refuses a launch of another block for such a kernel; a plan's host launches without the driver, so a
region of 64 threads for it was certified and threads 32..63 stored past the 32 words the PTX guards.
"""
from __future__ import annotations

import subprocess
from types import SimpleNamespace

import pytest

from bobc.certify import _listing_launch_findings
from bobc.nvtools import nvdisasm, ptxas
from bobc.sass import assemble_kernel
from bobc.targets import SM86, SM90

PTX = """.version 8.0
.target {arch}
.address_size 64
.visible .entry only32(.param .u64 out)
{reqntid}
{{
  .reg .pred %p;
  .reg .u32 %t;
  .reg .u64 %o, %a;
  mov.u32 %t, %tid.x;
  setp.ge.u32 %p, %t, 32;
  @%p bra DONE;
  ld.param.u64 %a, [out];
  cvta.to.global.u64 %a, %a;
  mul.wide.u32 %o, %t, 4;
  add.u64 %a, %a, %o;
  st.global.u32 [%a], %t;
DONE:
  ret;
}}
"""
TARGETS = {"sm_86": SM86, "sm_90": SM90}


def _source(tmp_path, arch: str, reqntid: str):
    if ptxas() is None or nvdisasm() is None:
        pytest.skip("ptxas / nvdisasm not installed (pip install nvidia-cuda-nvcc nvidia-cuda-nvdisasm)")
    ptx, cubin = tmp_path / "k.ptx", tmp_path / "k.cubin"
    ptx.write_text(PTX.format(arch=arch, reqntid=reqntid))
    subprocess.run([ptxas(), f"-arch={arch}", "-O3", "-o", str(cubin), str(ptx)], check=True, capture_output=True)
    listing = subprocess.run([nvdisasm(), "-hex", str(cubin)], check=True, capture_output=True, text=True).stdout
    source = tmp_path / "only32.sass"
    source.write_text("//@ param 0 pointer write 128 out\n" + listing)
    return source


def _findings(source, arch, block_x, launch_blocks=()):
    region = SimpleNamespace(identity=b"only32", block_x=block_x, at=None)
    launches = [SimpleNamespace(block=b, at=None) for b in launch_blocks]
    plan = SimpleNamespace(program=SimpleNamespace(regions=[region], launches=launches))
    return _listing_launch_findings(plan, region, source, TARGETS[arch], {0: list(range(len(launches)))}, 0)


@pytest.mark.parametrize("arch", sorted(TARGETS))
def test_a_region_of_another_block_than_reqntid_is_refused(tmp_path, arch):
    source = _source(tmp_path, arch, ".reqntid 32")
    built = assemble_kernel(source, TARGETS[arch])
    assert built.required_block == (32, 1, 1)
    assert not any(i.text.startswith("ISETP") for i in built.instructions)     # ptxas relied on it
    found = _findings(source, arch, 64)
    assert len(found) == 1 and "region only32 declares blocks of 64 threads" in found[0].message
    assert "compiled for blocks of exactly (32, 1, 1) threads" in found[0].message
    assert found[0].hint.startswith("launch it in blocks of (32, 1, 1)")
    assert _findings(source, arch, 32, [(32, 1, 1)]) == []
    wrong = _findings(source, arch, 32, [(32, 1, 1), (32, 2, 1)])
    assert len(wrong) == 1 and wrong[0].message.startswith("launch 1 (only32) runs blocks of (32, 2, 1)")


def test_a_listing_without_reqntid_takes_any_block(tmp_path):
    source = _source(tmp_path, "sm_86", "")
    assert assemble_kernel(source, SM86).required_block is None
    assert _findings(source, "sm_86", 64, [(64, 1, 1)]) == []
