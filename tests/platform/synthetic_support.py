"""Loading the synthetic host plans (tests/platform/Synthetic/*.bob) without the
assembler: fake kernel code, and ring images of zero entries."""
from __future__ import annotations

import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
SYNTHETIC = Path(__file__).resolve().parent / "Synthetic"
sys.path.insert(0, str(REPO / "tests" / "plan"))

import plan_support  # noqa: E402


def fake_registry():
    """plan_support's fake kernels, and each image component as 64 zero ring entries."""
    from bobc.language import VBytes

    registry = plan_support.fake_kernels()
    registry.register("NvidiaWholeProgramPlan", lambda value, context: VBytes(bytes(8 * 64)))
    return registry


def load(name: str, entry: str, intrinsics=None):
    from bobc.language import load_program
    from bobc.targets import SM86
    from bobc.plan.extract import extract_plan

    program = load_program(SYNTHETIC / f"{name}.bob", include=[plan_support.BOB.parent],
                           intrinsics=intrinsics or fake_registry(), target=SM86)
    program.check()
    return program, extract_plan(program, entry)
