"""Shared helpers for the platform-module tests (specs/)."""
from __future__ import annotations

from pathlib import Path

import pytest

REPOSITORY = Path(__file__).resolve().parents[2]


@pytest.fixture
def probe(tmp_path):
    """probe(text, *include) -> a Program for a module `Probe` whose body is `text`."""
    from bobc.language import Intrinsics, load_program
    from bobc.targets import SM86

    def load(text: str, *include):
        plan = tmp_path / "Probe.bob"
        plan.write_text("module Probe\n\n" + text, encoding="utf-8")
        return load_program(plan, include=list(include), intrinsics=Intrinsics(), target=SM86)
    return load
