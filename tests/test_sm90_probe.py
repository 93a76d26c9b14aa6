"""bench/gpu/sm90_product_probe.py writes PTX that ptxas compiles into sm_90's TMA and warpgroup-MMA
code, for every layout and pipeline it measures, and tools/ptx_corpus/sm90_hgmma_product.ptx is still what it
writes for the tiling the GPU test runs (the probe's results in bench/results rest on both)."""
from __future__ import annotations

import importlib.util
import subprocess
import sys

import pytest

from bobc.nvtools import nvdisasm, ptxas
from tests.conftest import REPO

TOOL = REPO / "bench" / "gpu" / "sm90_product_probe.py"


@pytest.fixture(scope="module")
def probe():
    spec = importlib.util.spec_from_file_location("sm90_product_probe", TOOL)
    module = importlib.util.module_from_spec(spec)
    sys.modules["sm90_product_probe"] = module
    spec.loader.exec_module(module)
    return module


def test_gpu_test_kernel_is_the_probes(probe):
    committed = (REPO / "tools" / "ptx_corpus" / "sm90_hgmma_product.ptx").read_text()
    body = committed[committed.index(".version"):]
    assert body == probe.kernel_ptx(64, 128, 4, False, "wait1")


@pytest.mark.parametrize("tm, tn, stages, split, mode, layout, wgs", [
    (64, 128, 4, False, "wait1", "nt", 1),
    (64, 64, 6, True, "wait0", "nt", 1),
    (128, 128, 4, False, "ws", "nn", 2),
    (64, 128, 8, False, "ws", "tn", 4),
])
def test_probe_kernels_compile_to_tma_and_warpgroup_mma(probe, tmp_path, tm, tn, stages, split, mode, layout, wgs):
    source = tmp_path / "probe.ptx"
    source.write_text(probe.kernel_ptx(tm, tn, stages, split, mode, layout, wgs=wgs))
    cubin = tmp_path / "probe.cubin"
    subprocess.run([ptxas(), "-arch=sm_90a", "-O3", str(source), "-o", str(cubin)], check=True)
    listing = subprocess.run([nvdisasm(), str(cubin)], check=True, capture_output=True, text=True).stdout
    assert f"HGMMA.64x{tn}x16.F32" in listing
    assert "UTMALDG.2D" in listing
    assert "SYNCS.PHASECHK.TRANS64.TRYWAIT" in listing
    assert ("red.global.add" in source.read_text()) == split


def test_probe_refuses_rings_its_warpgroups_cannot_share(probe):
    with pytest.raises(AssertionError, match="same warpgroup"):
        probe.kernel_ptx(64, 128, 3, False, "ws", wgs=2)
    with pytest.raises(AssertionError, match="two stages of its own"):
        probe.kernel_ptx(64, 128, 4, False, "ws", wgs=4)     # deadlocked on the H200
