"""Fixtures for the SASS tests: NVIDIA's tools as oracles, skipped cleanly when absent."""
from __future__ import annotations

import pytest

from bobc.nvtools import nvdisasm, ptxas


@pytest.fixture(scope="session")
def needs_nvdisasm():
    if nvdisasm() is None:
        pytest.skip("nvdisasm not installed (pip install nvidia-cuda-nvdisasm)")


@pytest.fixture(scope="session")
def needs_ptxas():
    if ptxas() is None:
        pytest.skip("ptxas not installed (pip install nvidia-cuda-nvcc)")
