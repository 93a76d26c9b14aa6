"""A kernel listing's launch bounds and cluster records are held to the plan's region and launches
(probe s44 listingattrs): PTX `.maxntid`, `.reqnctapercluster`, `.explicitcluster` and
`.maxclusterrank` were certified with any block and any cluster.

ptxas writes each as a record of the cubin's .nv.info.<kernel> section (EIATTR_MAX_THREADS,
EIATTR_CTA_PER_CLUSTER, EIATTR_EXPLICIT_CLUSTER, EIATTR_MAX_CLUSTER_RANK: nvdisasm names them; the
oracle is ptxas's own cubin of the PTX below).  The expected verdicts are the PTX ISA's
("Performance-Tuning Directives: .maxntid": the product of its extents is never exceeded, exceeding
it is a runtime error or a launch failure; "Cluster Dimension Directives": a launch of cluster
dimensions other than .reqnctapercluster's, without cluster dimensions under .explicitcluster, or of
more blocks a cluster than .maxclusterrank is a runtime error or a launch failure).  A plan's host
launches without the CUDA driver, so nothing refused those launches before.
"""
from __future__ import annotations

import subprocess
from types import SimpleNamespace

import pytest

from bobc.certify import _listing_launch_findings
from bobc.nvtools import nvdisasm, ptxas
from bobc.targets import SM86, SM90

PTX = """.version 8.0
.target {arch}
.address_size 64
.visible .entry bounded(.param .u64 out)
{attributes}
{{
  .reg .u32 %t;
  .reg .u64 %o, %a;
  mov.u32 %t, %tid.x;
  ld.param.u64 %a, [out];
  cvta.to.global.u64 %a, %a;
  mul.wide.u32 %o, %t, 4;
  add.u64 %a, %a, %o;
  st.global.u32 [%a], %t;
  ret;
}}
"""
TARGETS = {"sm_86": SM86, "sm_90": SM90}


def _source(tmp_path, arch: str, attributes: str):
    if ptxas() is None or nvdisasm() is None:
        pytest.skip("ptxas / nvdisasm not installed (pip install nvidia-cuda-nvcc nvidia-cuda-nvdisasm)")
    ptx, cubin = tmp_path / "k.ptx", tmp_path / "k.cubin"
    ptx.write_text(PTX.format(arch=arch, attributes=attributes))
    subprocess.run([ptxas(), f"-arch={arch}", "-O3", "-o", str(cubin), str(ptx)], check=True, capture_output=True)
    listing = subprocess.run([nvdisasm(), "-hex", str(cubin)], check=True, capture_output=True, text=True).stdout
    source = tmp_path / "bounded.sass"
    source.write_text("//@ param 0 pointer write 4096 out\n" + listing)
    return source


def _findings(source, arch, block_x, launches=()):
    """launches: (block, cluster) of each launch of the region."""
    region = SimpleNamespace(identity=b"bounded", block_x=block_x, at=None)
    runs = [SimpleNamespace(block=b, cluster=c, at=None) for b, c in launches]
    plan = SimpleNamespace(program=SimpleNamespace(regions=[region], launches=runs))
    return _listing_launch_findings(plan, region, source, TARGETS[arch], {0: list(range(len(runs)))}, 0)


@pytest.mark.parametrize("arch", sorted(TARGETS))
def test_a_block_past_maxntid_is_refused(tmp_path, arch):
    source = _source(tmp_path, arch, ".maxntid 16, 1, 1")
    found = _findings(source, arch, 32, [((32, 1, 1), (1, 1, 1))])
    assert len(found) == 1 and found[0].message.startswith("region bounded declares blocks of 32 threads, but")
    assert "compiled for blocks of at most 16 threads (PTX .maxntid 16, 1, 1" in found[0].message
    assert found[0].hint.startswith("launch it in blocks of at most 16 threads")
    # the region's x fits; a launch's y makes the block 32 threads
    wrong = _findings(source, arch, 16, [((16, 1, 1), (1, 1, 1)), ((16, 2, 1), (1, 1, 1))])
    assert len(wrong) == 1 and wrong[0].message.startswith("launch 1 (bounded) runs blocks of (16, 2, 1) (32 threads)")
    assert _findings(source, arch, 16, [((16, 1, 1), (1, 1, 1)), ((8, 2, 1), (1, 1, 1))]) == []


def test_maxntid_bounds_the_blocks_threads_not_each_dimension(tmp_path):
    # .maxntid 8, 4, 1 is a bound of 32 threads (the PTX ISA: the product of the extents)
    source = _source(tmp_path, "sm_86", ".maxntid 8, 4, 1")
    assert _findings(source, "sm_86", 32, [((32, 1, 1), (1, 1, 1))]) == []
    assert len(_findings(source, "sm_86", 64, [((64, 1, 1), (1, 1, 1))])) == 1


def test_a_launch_outside_reqnctapercluster_is_refused(tmp_path):
    source = _source(tmp_path, "sm_90", ".reqnctapercluster 2, 1, 1")
    found = _findings(source, "sm_90", 32, [((32, 1, 1), (1, 1, 1)), ((32, 1, 1), (2, 1, 1)), ((32, 1, 1), (4, 1, 1))])
    assert [f.message.split(", but")[0] for f in found] == ["launches 0, 2 (bounded) run without clusters"]
    assert "compiled for clusters of exactly (2, 1, 1) blocks (PTX .reqnctapercluster" in found[0].message
    assert found[0].hint.startswith("launch it in clusters of (2, 1, 1) (a launch's kernel value NvidiaLaunchKernelClustered")
    assert _findings(source, "sm_90", 32, [((32, 1, 1), (2, 1, 1))]) == []


def test_an_explicitcluster_kernel_launched_without_clusters_is_refused(tmp_path):
    source = _source(tmp_path, "sm_90", ".explicitcluster")
    found = _findings(source, "sm_90", 32, [((32, 1, 1), (1, 1, 1))])
    assert len(found) == 1 and found[0].message.startswith("launch 0 (bounded) runs without clusters, but")
    assert "PTX .explicitcluster" in found[0].message
    assert _findings(source, "sm_90", 32, [((32, 1, 1), (1, 2, 1))]) == []


def test_a_cluster_past_maxclusterrank_is_refused(tmp_path):
    source = _source(tmp_path, "sm_90", ".maxclusterrank 4")
    found = _findings(source, "sm_90", 32, [((32, 1, 1), (4, 1, 1)), ((32, 1, 1), (2, 4, 1))])
    assert len(found) == 1 and found[0].message.startswith("launch 1 (bounded) runs in clusters of (2, 4, 1), but")
    assert "at most 4 blocks (PTX .maxclusterrank" in found[0].message
    assert _findings(source, "sm_90", 32, [((32, 1, 1), (1, 1, 1)), ((32, 1, 1), (2, 2, 1))]) == []


def test_a_listing_without_bounds_takes_any_block_and_cluster(tmp_path):
    source = _source(tmp_path, "sm_90", "")
    assert _findings(source, "sm_90", 1024, [((1024, 1, 1), (1, 1, 1)), ((64, 2, 1), (8, 1, 1))]) == []
    source = tmp_path / "k.sass"     # a hand-written source has no .nv.info records
    source.write_text(".kernel k\n.registers 8\n    EXIT\n")
    assert _findings(source, "sm_86", 1024, [((1024, 1, 1), (1, 1, 1))]) == []
