"""`bobc dump` / `bobc diff`: a launch's parameter word whose kernel's contract was not found says
which file to make findable, not a bare "pass -I" (probe s40 newuser4 finding 2).

A new user's own plan dumped or diffed without -I, or with -I naming the wrong folder (the one
holding the plan's modules, not its kernels), got "(the kernel's argument names unknown: pass -I)"
on every word -- the same words whether -I was passed or not, naming neither the kernel's file nor
the folder.  The contract is looked up as `<identity>.sass` under each -I folder, recursively
(docs/kernel-contracts.md; bobc.kernel_search.find_source), so the line names that file."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
PLAN = REPO / "examples/linear_regression/LinReg/Build/NativeHost.bob"


def test_an_unfound_contract_names_the_file_to_find(tmp_path):
    images = tmp_path / "images"
    done = subprocess.run([sys.executable, "-m", "bobc", "build", str(PLAN), "--target", "sm_86",
                           "--emit-images", str(images)], capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    wrong = tmp_path / "modules-only"          # a folder without the kernel sources
    wrong.mkdir()
    dumped = subprocess.run([sys.executable, "-m", "bobc", "dump", str(images), "--no-code", "-I", str(wrong)],
                            capture_output=True, text=True, timeout=600)
    assert dumped.returncode == 0, dumped.stderr
    line = next(x for x in dumped.stdout.splitlines() if x.startswith("launch[2].bank0[0x170] = "))
    assert line.endswith("# parameter word 2 (the kernel's argument names unknown: no linreg-sgd.sass found; "
                         "pass -I with the folder that holds it)"), line
