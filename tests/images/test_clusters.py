"""A launch in thread-block clusters (NvidiaLaunchKernelClustered): its QMD and its bank 0.

The QMD fields are those libcuda wrote for a `__cluster_dims__(1, 1, 4)` kernel on the H200
(bench/results/cuda-cluster-launch-h200.md: the launch probe decoded them): QMD_TYPE 3, the
grid counted in clusters, GPC_CGA_* the cluster's shape, CGA_CTA_DISTRIBUTION_MODE 1 and the TPC
mask of the TPCs GH100 lacks with its VALID bit.  The bank 0 words are checked against ptxas's own
reading of them in tests/sim/test_clusters.py; here, that a target without clusters (sm_86)
launches the blocks alone, byte for byte as an unclustered launch, and that the certifier refuses
a cluster that does not tile its grid or is too large."""
from __future__ import annotations

import struct

import pytest

from bobc.errors import BobcError
from bobc.nvidia.encode import bank_zero, grid_qmd
from bobc.nvidia.qmd import decode_dict
from bobc.targets import SM86, SM90


def _qmd(target, grid, cluster=(1, 1, 1)):
    return grid_qmd(target, "launch 0 (k)", grid, (128, 1, 1), 96, 0x8000, 0x10_0000_0000, 0x1000,
                    0x12_0000_0000, cluster=cluster, barriers=1)


def test_sm90_cluster_qmd_is_libcudas():
    fields = decode_dict("V04_00", _qmd(SM90, (12, 4, 4), (1, 1, 4)))
    assert fields["QMD_TYPE"] == 3
    assert (fields["GRID_WIDTH"], fields["GRID_HEIGHT"], fields["GRID_DEPTH"]) == (12, 4, 1)
    assert (fields["GPC_CGA_WIDTH"], fields["GPC_CGA_HEIGHT"], fields["GPC_CGA_DEPTH"]) == (1, 1, 4)
    assert fields["CGA_CTA_DISTRIBUTION_MODE"] == 1
    assert fields["TPC_DISABLE_MASK_VALID"] == 1
    assert (fields["TPC_DISABLE_MASK(2)"], fields["TPC_DISABLE_MASK(3)"]) == (0xFFFFFF00, 0xFFFFFFFF)
    plain = decode_dict("V04_00", _qmd(SM90, (12, 4, 4)))
    assert plain["QMD_TYPE"] == 2 and plain["GRID_DEPTH"] == 4 and plain["GPC_CGA_DEPTH"] == 0
    assert plain["TPC_DISABLE_MASK_VALID"] == 0
    differing = {name for name in fields if fields[name] != plain[name]}
    assert differing == {"QMD_TYPE", "GRID_DEPTH", "GPC_CGA_WIDTH", "GPC_CGA_HEIGHT", "GPC_CGA_DEPTH",
                         "CGA_CTA_DISTRIBUTION_MODE", "TPC_DISABLE_MASK_VALID", "TPC_DISABLE_MASK(2)",
                         "TPC_DISABLE_MASK(3)"}


def test_sm86_runs_the_blocks_alone():
    assert _qmd(SM86, (12, 4, 4), (1, 1, 4)) == _qmd(SM86, (12, 4, 4))
    assert bank_zero(SM86, (12, 4, 4), (128, 1, 1), (1, 1, 4)) == bank_zero(SM86, (12, 4, 4), (128, 1, 1))


def test_sm90_bank_zero_says_the_cluster():
    """%is_explicit_cluster, %cluster_nctaid, %nclusterid, %cluster_nctarank (PTX's definitions)."""
    bank = bank_zero(SM90, (12, 4, 4), (128, 1, 1), (1, 2, 4))
    assert struct.unpack_from("<I", bank, 0x140) == (1,)
    assert struct.unpack_from("<3I", bank, 0x144) == (1, 2, 4)
    assert struct.unpack_from("<3I", bank, 0x15C) == (12, 2, 1)
    assert struct.unpack_from("<I", bank, 0x188) == (8,)
    alone = bank_zero(SM90, (12, 4, 4), (128, 1, 1))
    assert struct.unpack_from("<I", alone, 0x140) == (0,)
    assert struct.unpack_from("<3I", alone, 0x144) == (1, 1, 1)
    assert struct.unpack_from("<3I", alone, 0x15C) == (12, 4, 4)
    assert struct.unpack_from("<I", alone, 0x188) == (1,)


def test_a_cluster_must_tile_the_grid():
    with pytest.raises(BobcError, match=r"clusters of \(1, 1, 3\) blocks do not tile the grid \(12, 4, 4\)"):
        _qmd(SM90, (12, 4, 4), (1, 1, 3))


@pytest.mark.parametrize("cluster,message", [((1, 1, 3), "do not tile its grid"), ((2, 1, 8), "blocks a cluster is 16")])
def test_the_certifier_refuses_a_bad_cluster(cluster, message):
    from types import SimpleNamespace
    from bobc.certify.limits import check_limits
    launch = SimpleNamespace(identity="k", grid=(4, 1, 8), block=(128, 1, 1), parameter_bytes=512, patches=(),
                             cluster=cluster, at=None)
    program = SimpleNamespace(launches=(launch,), launch_count=1, submissions=(), submission_count=0,
                              gpfifo_entries=1, program_base=0, qmd_base=0, pushbuffer_base=0, semaphore_base=0,
                              program_bytes=0, qmd_table_bytes=0, region_alignment=256, at=None)
    plan = SimpleNamespace(program=program, host=None, checkpoint=None)
    findings = [f.message for f in check_limits(plan, SM90)]
    assert any(message in f for f in findings), findings
