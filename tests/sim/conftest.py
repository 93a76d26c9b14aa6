"""Shared fixtures for the simulator tests: Bob built once per target, the reference case."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from bobc import pipeline
from bob_model import formats
from bob_model.model import BobConfig
from bobc.targets import TARGETS

REPO = Path(__file__).resolve().parents[2]
PLAN = REPO / "examples/bob/Bob/Build/NativeHost.bob"
ALL_STEPS = REPO / "tests/platform/Synthetic/AllSteps.bob"
DATA = REPO / "tests/data/shared/data/bob-reference"   # vendored once (tests/data/PROVENANCE)

_built: dict = {}


def built_for(target_name: str):
    """(Built, Target) for Bob, compiled once per session and target."""
    if target_name not in _built:
        target = TARGETS[target_name]
        _built[target_name] = (pipeline.compile_plan(PLAN, target), target)
    return _built[target_name]


@pytest.fixture(scope="session")
def all_steps():
    """(Built, its host plan) of the synthetic plan with every host step kind (sm_86)."""
    from bobc.sim.host_adapter import host_plan
    from bobc.targets import SM86

    built = pipeline.compile_plan(ALL_STEPS, SM86, [REPO / "examples/bob"], "synAllStepsHost")
    return built, host_plan(built.plan, built.images, SM86, built.program.search_path)


@pytest.fixture(scope="session")
def kernels():
    """Bob's reference kernels (KERNELS), loaded as `bobc run --reference` loads them."""
    from bobc.commands.run import load_kernels

    return load_kernels(REPO / "examples/bob/reference_kernels.py")


@pytest.fixture(scope="session")
def case():
    """(record bytes, checkpoint bytes, expected-1 arrays, BobConfig) of the vendored PyTorch case."""
    inputs = np.load(DATA / "case.npz")
    record = formats.encode_input_record(formats.InputRecord(inputs["targets"], inputs["prompts"]))
    config = BobConfig()
    state = formats.Checkpoint(inputs["P"], inputs["M"], inputs["V"], int(inputs["step"]))
    return record, formats.encode_checkpoint(config.contract, state), np.load(DATA / "expected-1.npz"), config
