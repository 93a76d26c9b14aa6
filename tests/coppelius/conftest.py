"""Coppelius's tests import coppelius_model from examples/coppelius."""
from __future__ import annotations

import sys
from pathlib import Path

REPOSITORY = Path(__file__).resolve().parents[2]
EXAMPLE = REPOSITORY / "examples" / "coppelius"
TEXT = REPOSITORY / "tests" / "data" / "coppelius" / "tinyshakespeare-64k.txt"
if str(EXAMPLE) not in sys.path:
    sys.path.insert(0, str(EXAMPLE))
