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
