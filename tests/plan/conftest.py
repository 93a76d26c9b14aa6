"""Fixtures for the plan tests: Bob's plans loaded with the real evaluator.

Tests that need the evaluator skip (with the reason) until bobc.language
imports.  Kernel machine code comes from the SASS assembler; where a test
needs only the plan's structure, `fake_kernels` stands in with fixed-size
byte strings whose lengths the test knows (never used outside tests).
"""
from __future__ import annotations

import sys
from pathlib import Path

import pytest

# the tests import plan_support (pytest runs with --import-mode=importlib)
sys.path.insert(0, str(Path(__file__).resolve().parent))

REPO = Path(__file__).resolve().parents[2]
BOB = REPO / "examples" / "bob" / "Bob"
PHYSICAL = BOB / "Build" / "PhysicalComponents.bob"
NATIVE_HOST = BOB / "Build" / "NativeHost.bob"

try:
    from bobc.language import load_program as _load_program  # noqa: F401
    LANGUAGE_MISSING = None
except ImportError as error:       # the evaluator is another helper's, and may lag
    LANGUAGE_MISSING = f"the evaluator (bobc.language.load_program) does not import yet: {error}"

needs_language = pytest.mark.skipif(LANGUAGE_MISSING is not None, reason=LANGUAGE_MISSING or "")

# fake machine code sizes per kernel source (bytes, multiples of 16 like SASS)
FAKE_SIZES = {
    "bob-row-gather.sass": 384,
    "bob-loss-gradient.sass": 1296,
    "bob-adamw.sass": 736,
    "bob-greedy-argmax.sass": 512,
}


def fake_kernels():
    """An Intrinsics registry whose SM86Program handler returns FAKE_SIZES zero bytes."""
    from bobc.language import Intrinsics, VBytes

    def kernel(value, context):
        program = context.program
        source = program.force(program.force(value).fields[0]).value.decode()
        return VBytes(bytes(FAKE_SIZES[Path(source).name]))

    def images(value, context):
        raise AssertionError("the tests do not encode images")

    registry = Intrinsics()
    registry.register("SM86Program", kernel)
    registry.register("NvidiaWholeProgramPlan", images)
    return registry


@pytest.fixture(scope="session")
def physical():
    if LANGUAGE_MISSING:
        pytest.skip(LANGUAGE_MISSING)
    from bobc.language import load_program
    return load_program(PHYSICAL)


@pytest.fixture(scope="session")
def host_fake():
    """Bob.Build.NativeHost with fake kernels (structure only)."""
    if LANGUAGE_MISSING:
        pytest.skip(LANGUAGE_MISSING)
    from bobc.language import load_program
    return load_program(NATIVE_HOST, intrinsics=fake_kernels())


@pytest.fixture(scope="session")
def plan_fake(host_fake):
    from bobc.plan.extract import extract_plan
    return extract_plan(host_fake)
