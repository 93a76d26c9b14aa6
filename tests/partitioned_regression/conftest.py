"""Seed 003's tests: the model's Python package (examples/partitioned_regression) and the
independent native-program interpreter (tests/specs/native_program.py) on the path."""
from __future__ import annotations

import sys
from pathlib import Path

REPOSITORY = Path(__file__).resolve().parents[2]
for folder in (REPOSITORY / "examples/partitioned_regression", REPOSITORY / "tests/specs",
               Path(__file__).resolve().parent):
    if str(folder) not in sys.path:
        sys.path.insert(0, str(folder))
