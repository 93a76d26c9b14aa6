"""The Bob host the diff / dump / inspect tests read: built once for the folder (sm_90)."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

PLAN = Path(__file__).resolve().parents[2] / "examples/bob/Bob/Build/NativeHost.bob"


@pytest.fixture(scope="session")
def host(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("host") / "bob-host"
    done = subprocess.run([sys.executable, "-m", "bobc", "build", str(PLAN), "--target", "sm_90", "-o", str(path)],
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    return path
