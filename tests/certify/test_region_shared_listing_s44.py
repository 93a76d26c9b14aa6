"""A region that gives its blocks less shared memory than an nvdisasm listing's kernel declares is
refused by the certifier, as one below a hand-written source's `.shared BYTES` is (probe s44 newuser9,
finding 1).

A user who writes a kernel in PTX, runs ptxas and takes nvdisasm's listing as the kernel's source (the
path docs/writing-a-plan.md section 2 describes) declares its shared memory the way ptxas wrote it: the
listing's `.nv.shared.<kernel>` section (`.zero N`).  The assembler reads it
(bobc.sass.assembler.listing_shared_bytes; `sm86ProgramSharedBytes` gives it), but the certifier's
check read only a `.shared` line, so a region of 0 bytes for such a kernel was certified on both
targets; on sm_90 `bobc sim` then stopped at the kernel's first STS ("shared-memory access at 0x400
... outside the block's 1024 bytes"), naming neither the region nor the declaration, and a GPU faults.

The expected sizes come from the PTX, not from bobc: a `.shared .f32 res[32]` array is 128 bytes, which
ptxas places from 0 on sm_86 and from 0x400 on sm_90 (the system keeps the first KiB there:
docs/targets.md, "Shared memory the system keeps"), so the block needs 128 and 1024 + 128 = 1152 bytes.
"""
from __future__ import annotations

import subprocess
from types import SimpleNamespace

import pytest

from bobc.certify import _shared_findings
from bobc.nvtools import nvdisasm, ptxas
from bobc.targets import SM86, SM90

PTX = """.version 8.0
.target {arch}
.address_size 64
.visible .entry stash(.param .u64 out)
{{
  .reg .u32 %t, %a, %b;
  .reg .u64 %o, %p;
  .reg .f32 %f;
  .shared .align 4 .f32 res[32];
  mov.u32 %t, %tid.x;
  cvt.rn.f32.u32 %f, %t;
  shl.b32 %a, %t, 2;
  mov.u32 %b, res;
  add.u32 %a, %a, %b;
  st.shared.f32 [%a], %f;
  bar.sync 0;
  xor.b32 %a, %a, 4;
  ld.shared.f32 %f, [%a];
  ld.param.u64 %p, [out];
  cvta.to.global.u64 %p, %p;
  mul.wide.u32 %o, %t, 4;
  add.u64 %p, %p, %o;
  st.global.f32 [%p], %f;
  ret;
}}
"""
NEEDED = {"sm_86": 128, "sm_90": 1024 + 128}
TARGETS = {"sm_86": SM86, "sm_90": SM90}


@pytest.fixture(scope="module")
def listings(tmp_path_factory):
    if ptxas() is None or nvdisasm() is None:
        pytest.skip("ptxas / nvdisasm not installed (pip install nvidia-cuda-nvcc nvidia-cuda-nvdisasm)")
    folder = tmp_path_factory.mktemp("listing")
    out = {}
    for arch in NEEDED:
        ptx, cubin = folder / f"k.{arch}.ptx", folder / f"k.{arch}.cubin"
        ptx.write_text(PTX.format(arch=arch))
        subprocess.run([ptxas(), f"-arch={arch}", "-O3", "-o", str(cubin), str(ptx)], check=True, capture_output=True)
        source = folder / arch / "stash.sass"
        source.parent.mkdir()
        source.write_text("//@ block 32\n//@ param 0 pointer write 128 out\n"
                          + subprocess.run([nvdisasm(), "-hex", str(cubin)], check=True, capture_output=True,
                                           text=True).stdout)
        out[arch] = source
    return out


def _findings(source, arch, given):
    return _shared_findings(SimpleNamespace(identity=b"stash", shared_bytes=given, at=None), source, TARGETS[arch])


@pytest.mark.parametrize("arch", sorted(NEEDED))
def test_a_region_below_a_listings_shared_section_is_refused(listings, arch):
    for given in (0, NEEDED[arch] - 4):
        found = _findings(listings[arch], arch, given)
        assert len(found) == 1, (arch, given)
        assert (f"region stash gives its blocks {given} bytes of shared memory, but stash.sass declares "
                f"{NEEDED[arch]} bytes of shared memory (its .nv.shared section") in found[0].message
        assert f"give the region at least {NEEDED[arch]} bytes" in found[0].hint


@pytest.mark.parametrize("arch", sorted(NEEDED))
def test_a_region_that_gives_the_listings_shared_memory_passes(listings, arch):
    assert _findings(listings[arch], arch, NEEDED[arch]) == []
    assert _findings(listings[arch], arch, NEEDED[arch] + 4) == []


def test_a_listing_without_shared_memory_needs_none(tmp_path):
    # LinReg-shaped listings (no .nv.shared section) and sources without `.shared` stay unrefused
    source = tmp_path / "k.sass"
    source.write_text(".kernel k\n.registers 16\n    EXIT\n")
    assert _shared_findings(SimpleNamespace(identity=b"k", shared_bytes=0, at=None), source, SM86) == []
