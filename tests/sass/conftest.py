"""Fixtures for the SASS tests: NVIDIA's tools as oracles, skipped cleanly when absent."""
from __future__ import annotations

import pytest

import os

from bobc.nvtools import nvdisasm, ptxas


def _usable(path) -> bool:
    return path is not None and os.path.isfile(path) and os.access(path, os.X_OK)


@pytest.fixture(scope="session")
def needs_nvdisasm():
    if not _usable(nvdisasm()):
        pytest.skip("nvdisasm not installed (pip install nvidia-cuda-nvdisasm)")


@pytest.fixture(scope="session")
def needs_ptxas():
    if not _usable(ptxas()):
        pytest.skip("ptxas not installed (pip install nvidia-cuda-nvcc)")


@pytest.fixture(scope="session")
def ptxas_listing(needs_ptxas, needs_nvdisasm, tmp_path_factory):
    """compile(ptx_text, arch, opt="-O3") -> `nvdisasm -hex` of the cubin ptxas makes of it: the
    oracle for a form the committed corpus lacks (ptxas writes it, nvdisasm prints it with its words)."""
    import subprocess

    folder = tmp_path_factory.mktemp("ptxas")

    def compile(ptx: str, arch: str, opt: str = "-O3", life_ranges: bool = False) -> str:
        source = folder / "k.ptx"
        cubin = folder / f"k.{arch}.cubin"
        source.write_text(ptx)
        subprocess.run([ptxas(), f"-arch={arch}", opt, "-o", str(cubin), str(source)], check=True,
                       capture_output=True, text=True)
        extra = ["-plr", "-lrm", "narrow"] if life_ranges else []
        return subprocess.run([nvdisasm(), *extra, "-hex", str(cubin)], check=True, capture_output=True,
                              text=True).stdout

    return compile
