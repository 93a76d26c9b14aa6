"""What a refused nvdisasm listing tells a plan's author to do (probe s44 newuser9, findings 3 and 5).

A kernel written in PTX reaches a plan as the nvdisasm listing of ptxas's cubin
(docs/writing-a-plan.md, section 2).  Two refusals of such a source named only `bobc asm`'s options:
- an sm_86 listing that a plan's sm_90 build assembles: "assemble it with --arch sm_86, or list a
  cubin made for sm_90" -- a plan has no --arch; what it does is give the sm_90 listing as the
  kernel's per-target variant `<stem>.sm_90.sass` beside it (docs/kernel-contracts.md, "Per-target
  sources"), or build with --target sm_86;
- a listing of a PTX module with two .entry kernels: "hint: bobc asm --kernel NAME" -- a plan's
  kernel source is one kernel (its SM86Program names the file), so the way out is a cubin of that
  kernel alone.
The listings are ptxas's own (the oracle for what a user has); the expected hints follow from the
per-target rule of docs/kernel-contracts.md, not from bobc's output."""
from __future__ import annotations

import subprocess

import pytest

from bobc.errors import BobcError
from bobc.nvtools import nvdisasm, ptxas
from bobc.sass import assemble_kernel
from bobc.targets import SM86, SM90

ENTRY = """.visible .entry {name}(.param .u64 out)
{{
  .reg .u64 %p;
  .reg .u32 %t;
  ld.param.u64 %p, [out];
  cvta.to.global.u64 %p, %p;
  mov.u32 %t, %tid.x;
  st.global.u32 [%p], %t;
  ret;
}}
"""


def _listing(tmp_path, arch: str, names) -> str:
    if ptxas() is None or nvdisasm() is None:
        pytest.skip("ptxas / nvdisasm not installed (pip install nvidia-cuda-nvcc nvidia-cuda-nvdisasm)")
    ptx, cubin = tmp_path / "m.ptx", tmp_path / "m.cubin"
    ptx.write_text(f".version 8.0\n.target {arch}\n.address_size 64\n" + "".join(ENTRY.format(name=n) for n in names))
    subprocess.run([ptxas(), f"-arch={arch}", "-O3", "-o", str(cubin), str(ptx)], check=True, capture_output=True)
    return subprocess.run([nvdisasm(), "-hex", str(cubin)], check=True, capture_output=True, text=True).stdout


def test_an_sm_86_listing_built_for_sm_90_names_the_variant_to_add(tmp_path):
    source = tmp_path / "ridge-step.sass"
    source.write_text("//@ block 32\n//@ param 0 pointer write 128 out\n" + _listing(tmp_path, "sm_86", ["ridge_step"]))
    assemble_kernel(source, SM86)                                  # its own target takes it
    with pytest.raises(BobcError) as refused:
        assemble_kernel(source, SM90, launched=True)
    assert "this listing is for sm_86 (.target sm_86), not sm_90" in refused.value.message
    hint = refused.value.hint
    assert "ridge-step.sm_90.sass" in hint and "--target sm_86" in hint and "Per-target sources" in hint, hint


def test_a_listing_of_two_kernels_says_a_plans_source_is_one_kernel(tmp_path):
    source = tmp_path / "ridge-step.sass"
    source.write_text(_listing(tmp_path, "sm_86", ["ridge_step", "ridge_other"]))
    with pytest.raises(BobcError) as refused:
        assemble_kernel(source, SM86, launched=True)
    assert "the listing holds 2 kernels" in refused.value.message
    assert "bobc asm --kernel NAME" in refused.value.hint
    assert "a plan's kernel source is one kernel" in refused.value.hint, refused.value.hint
