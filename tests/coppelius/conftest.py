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


def simulate_one_update(folder: Path, shape: str = "small", seed: int = 3) -> list:
    """Seed 004's host for `shape` (one publication of one update), built for sm_90 under
    `folder` and run through bobc's simulator from a fresh checkpoint (seed `seed`) on the
    tests' text: coppelius_host.sim_compare's results against the formula reference."""
    from coppelius_host import build, checkpoint, sim_compare
    from coppelius_model import stream
    root = build.plan_copy(folder / "plan", 1, 1, shape)
    host = build.build_from(root, "sm_90", folder / "coppelius-host")
    text = folder / "text.stream"
    text.write_bytes(stream.from_bytes(TEXT.read_bytes()).encode())
    fresh = folder / "fresh.ckpt"
    fresh.write_bytes(checkpoint.encode(checkpoint.fresh(shape, seed=seed), shape, 1))
    return sim_compare.compare(host, text, fresh, folder / "runs", invocations=1, seed=seed,
                               config_name=shape, say=print)


def assert_one_update_agrees(result) -> None:
    """docs/coppelius.md's tolerances for one simulated update against the formula reference:
    the first update's mean loss within 1e-3 relative; 99.5% of the master weights within 1e-3
    alpha_1 of the reference's, every one within 2 alpha_1; predictions finite, nothing skipped."""
    import numpy as np
    assert (result.step, result.updates, result.skipped) == (1, 1, 0)
    assert result.predictions_finite
    assert result.relative[0] <= 1e-3, result.line()
    assert np.quantile(result.difference, 0.995) <= 1e-3 * result.moved, result.line()
    assert result.difference.max() <= 2 * result.moved, result.line()
    assert result.failures(first=True) == []
