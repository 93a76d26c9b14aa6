"""Shared helpers for the language tests (Dhall-style success/failure folders)."""
from __future__ import annotations

from pathlib import Path

import pytest

HERE = Path(__file__).parent
REPOSITORY = HERE.parents[1]


def cases(folder: str, pattern: str):
    """The test files of one suite folder, as pytest params named by file."""
    paths = sorted((HERE / folder).glob(pattern))
    return [pytest.param(p, id=p.stem) for p in paths]


def expected_fragments(path: Path) -> list[str]:
    """Each non-empty line of a failure test's .txt must appear in the error."""
    return [line for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
