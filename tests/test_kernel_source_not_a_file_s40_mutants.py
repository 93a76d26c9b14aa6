"""A kernel source's variant for the build's target (`x.<target>.sass`, docs/kernel-contracts.md
"Per-target sources") that is there but is not a regular file is named as what it is, like the
source itself (probe s40 mutants5: tests/test_kernel_source_not_a_file_s40.py made only the
named path a folder / FIFO / broken link, so a check that looked at the named path alone passed).
LinReg builds for sm_90 by default (bobc check without --target), so its sgd kernel's variant is linreg-sgd.sm_90.sass."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def test_a_variant_that_is_a_folder_is_named_as_one(tmp_path):
    shutil.copytree(REPO / "examples" / "linear_regression" / "LinReg", tmp_path / "LinReg")
    kernels = tmp_path / "LinReg" / "kernels"
    (kernels / "linreg-sgd.sass").unlink()
    (kernels / "linreg-sgd.sm_90.sass").mkdir()
    result = subprocess.run([sys.executable, "-m", "bobc", "check", "LinReg/Build/NativeHost.bob"],
                            capture_output=True, text=True, cwd=tmp_path, timeout=300,
                            env={**os.environ, "PYTHONPATH": str(REPO / "compiler"), "BOBC_CACHE_DIR": "off"})
    assert result.returncode == 1 and "Traceback" not in result.stderr, result.stderr
    first = result.stderr.splitlines()[0]
    assert first.endswith("error: kernel source LinReg/kernels/linreg-sgd.sass: "
                          "LinReg/kernels/linreg-sgd.sm_90.sass is a folder, not a SASS source file"), first
