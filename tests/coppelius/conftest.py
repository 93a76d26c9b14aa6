"""Coppelius's tests import coppelius_model from examples/coppelius."""
from __future__ import annotations

import sys
from pathlib import Path

REPOSITORY = Path(__file__).resolve().parents[2]
EXAMPLE = REPOSITORY / "examples" / "coppelius"
TEXT = REPOSITORY / "tests" / "data" / "coppelius" / "tinyshakespeare-64k.txt"
if str(EXAMPLE) not in sys.path:
    sys.path.insert(0, str(EXAMPLE))


# The product generator's other tilings, generated once per session into temporary folders
# (the committed kernels are 64 x 64 on 4 warps): tests/coppelius/test_kernels_gemm.py and
# test_kernels_gemm_sim.py hold them to the committed ones.
import pytest  # noqa: E402

GEMM_PREFIX = "coppelius-gemm"   # the model's name for its product kernels


@pytest.fixture(scope="session")
def tall_sources(tmp_path_factory):
    """The tile_m = 128 kernels (8 warps)."""
    from bobc.sass.generate import gemm
    folder = tmp_path_factory.mktemp("gemm-tile-128")
    gemm.write_all(folder, GEMM_PREFIX, tile_m=128)
    return folder


@pytest.fixture(scope="session")
def eight_warp_sources(tmp_path_factory):
    """The 64-row kernels on 8 warps."""
    from bobc.sass.generate import gemm
    folder = tmp_path_factory.mktemp("gemm-warps-8")
    gemm.write_all(folder, GEMM_PREFIX, warps=8)
    return folder
