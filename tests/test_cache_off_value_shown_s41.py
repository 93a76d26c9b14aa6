"""`bobc cache` with the cache turned off echoes BOBC_CACHE_DIR as the user wrote it
(probe-docs10 s41: BOBC_CACHE_DIR=OFF was shown as `BOBC_CACHE_DIR=off`).  docs/cache.md: `off`
in any case turns the cache off; the expected line is the variable and the value set below."""
import os
import subprocess
import sys
from pathlib import Path

import pytest

REPOSITORY = Path(__file__).resolve().parents[1]


@pytest.mark.parametrize("value", ["OFF", "Off", "off"])
def test_bobc_cache_shows_the_value_given(value):
    environment = {**os.environ, "PYTHONPATH": str(REPOSITORY / "compiler"), "BOBC_CACHE_DIR": value}
    done = subprocess.run([sys.executable, "-m", "bobc", "cache"], capture_output=True, text=True,
                          env=environment)
    assert done.returncode == 0
    assert done.stdout == f"bobc cache: off (BOBC_CACHE_DIR={value})\n"
