"""gcc's DEPENDENCIES_OUTPUT and SUNPRO_DEPENDENCIES are not handed to the gcc bobc runs (probe s37
repro, finding 4).  gcc's preprocessor writes make dependencies to the file either names ("Environment
Variables Affecting GCC"); a make-driven build may have set one, and every gcc of `bobc build`
wrote it -- a file the user never named as an output, naming bobc's temporaries.  The host is the
same bytes either way."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
PLAN = REPO / "examples/linear_regression/LinReg/Build/NativeHost.bob"

pytestmark = pytest.mark.skipif(shutil.which("gcc") is None, reason="needs gcc")


@pytest.mark.parametrize("variable", ["DEPENDENCIES_OUTPUT", "SUNPRO_DEPENDENCIES"])
def test_a_build_writes_no_dependency_file(tmp_path, variable):
    dependencies = tmp_path / "deps.d"
    environment = {**os.environ, variable: str(dependencies), "BOBC_CACHE_DIR": "off"}
    done = subprocess.run([sys.executable, "-m", "bobc", "build", str(PLAN), "-o", str(tmp_path / "host")],
                          capture_output=True, text=True, timeout=600, env=environment)
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "host").is_file()
    assert not dependencies.exists(), dependencies.read_text()[:300]
