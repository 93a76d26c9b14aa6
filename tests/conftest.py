"""Shared test configuration.

GPU tests (marked `gpu`) need an NVIDIA GPU and its kernel driver: they skip
cleanly where /dev/nvidiactl is absent (CI, developer machines) and run on
the device machine through tests/gpu/run.sh.
"""
from __future__ import annotations

import os
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
SHARED = Path(os.environ.get("BOBC_SHARED", REPO.parent / "shared"))


def has_gpu() -> bool:
    return os.path.exists("/dev/nvidiactl")


def pytest_collection_modifyitems(config, items):
    if has_gpu():
        return
    skip = pytest.mark.skip(reason="needs an NVIDIA GPU (/dev/nvidiactl absent); run tests/gpu/run.sh on a GPU machine")
    for item in items:
        if "gpu" in item.keywords:
            item.add_marker(skip)


@pytest.fixture(scope="session")
def repo() -> Path:
    return REPO


@pytest.fixture(scope="session")
def shared() -> Path:
    if not SHARED.is_dir() and not os.environ.get("BOB_REFERENCE_DATA"):
        pytest.skip(f"shared data folder not found at {SHARED}")
    return SHARED
