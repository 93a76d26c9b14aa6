"""Shared fixtures for the simulator tests: Bob built once per target, the reference case."""
from __future__ import annotations

import re
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


def shared_base(target: str) -> int:
    """Where a block's own shared memory starts on `target`: bobc.targets SMResources.shared_base
    (sm_90 keeps its first KiB for the system; tests/sass/test_shared_base_s41.py holds the row to
    where ptxas places a kernel's `.shared` variables)."""
    return TARGETS[target].sm_resources.shared_base


_SHARED_OPERAND = re.compile(r"^(\s*(?:@!?U?P\w+\s+)?(?:STS|LDS|ATOMS|LDSM)\S*\s[^\[\n]*)\[(R\d+|RZ)(?:\+(0x[0-9a-fA-F]+))?\]",
                             re.MULTILINE)


def above_shared_base(kernel: str, target: str) -> str:
    """`kernel` (a test's SASS text written for shared memory from 0) moved to `target`'s
    shared_base: each STS / LDS / ATOMS / LDSM address gets the base added to its immediate and
    `.shared` grows by it.  Unchanged where the base is 0 (sm_86)."""
    base = shared_base(target)
    if not base:
        return kernel

    def move(m):
        return f"{m.group(1)}[{m.group(2)}+{int(m.group(3) or '0', 16) + base:#x}]"

    kernel = _SHARED_OPERAND.sub(move, kernel)
    return re.sub(r"^(\s*\.shared\s+)(\S+)", lambda m: f"{m.group(1)}{int(m.group(2), 0) + base}", kernel,
                  flags=re.MULTILINE)
