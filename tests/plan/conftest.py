"""Fixtures for the plan tests: Bob's plans loaded with the real evaluator.

Kernel machine code comes from the SASS assembler; where a test
needs only the plan's structure, `fake_kernels` (plan_support.py) stands in
with fixed-size byte strings whose lengths the test knows.
"""
from __future__ import annotations

import sys
from pathlib import Path

import pytest

# the tests import plan_support (pytest runs with --import-mode=importlib); the
# plan paths and fake kernels live there, not here: `from conftest import` would
# find whichever test folder's conftest.py comes first on sys.path
sys.path.insert(0, str(Path(__file__).resolve().parent))

from plan_support import NATIVE_HOST, PHYSICAL, fake_kernels  # noqa: E402


@pytest.fixture(scope="session")
def physical():
    from bobc.language import load_program
    from bobc.targets import SM86
    return load_program(PHYSICAL, target=SM86)


@pytest.fixture(scope="session")
def host_fake():
    """Bob.Build.NativeHost with fake kernels (structure only)."""
    from bobc.language import load_program
    from bobc.targets import SM86
    return load_program(NATIVE_HOST, intrinsics=fake_kernels(), target=SM86)


@pytest.fixture(scope="session")
def plan_fake(host_fake):
    from bobc.plan.extract import extract_plan
    return extract_plan(host_fake, "bobNativeHost")
