"""Fixtures for the reference runner's tests: the PyTorch-computed Bob case."""
from __future__ import annotations

import numpy as np
import pytest

from bob_model.model import BobConfig
from bob_model.formats import Checkpoint, InputRecord


@pytest.fixture(scope="session")
def bob_case(shared):
    """case.npz, expected-1.npz and expected-2.npz as dicts of arrays."""
    folder = shared / "data" / "bob-reference"
    if not (folder / "case.npz").is_file():
        pytest.fail(f"Bob reference case not found in {folder} (tests/data/PROVENANCE lists it)")
    return {name: dict(np.load(folder / f"{name}.npz"))
            for name in ("case", "expected-1", "expected-2")}


@pytest.fixture(scope="session")
def config():
    return BobConfig()


@pytest.fixture(scope="session")
def case_record(bob_case):
    case = bob_case["case"]
    return InputRecord(case["targets"], case["prompts"])


def _state_of(arrays) -> Checkpoint:
    return Checkpoint(arrays["P"], arrays["M"], arrays["V"], int(arrays["step"]))


@pytest.fixture(scope="session")
def state_of():
    """Checkpoint from an npz's P, M, V and step."""
    return _state_of
