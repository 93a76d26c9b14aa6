"""A launch whose block's y or z is not its kernel's `//@ block` is told what to do (probe s41
newuser5, finding 3).

A user's kernel indexed by (SR_TID.X, SR_TID.Y), declared `//@ block 16` and launched with blockY 9,
was told only "run blocks of (16, 9, 1), but k.sass is written for (16, 1, 1) (its //@ block)";
docs/writing-a-plan.md shows `//@ block 64` alone, and the `X [Y [Z]]` form is in
docs/kernel-contracts.md.  The refusal now has a hint naming both remedies: the launches' y and z
the contract declares, or the contract line their block needs -- for LinReg launched with block y 2,
`//@ block 64 2` for linreg-predict (its region's x is 64, the launch's y 2: the line's own grammar,
`//@ block X [Y [Z]]`, docs/kernel-contracts.md)."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def test_a_launch_block_the_contract_does_not_declare_says_what_to_write(tmp_path):
    shutil.copytree(REPO / "examples" / "linear_regression" / "LinReg", tmp_path / "LinReg")
    module = tmp_path / "LinReg" / "Build" / "NativeHost.bob"
    text = module.read_text()
    old = "(lrWord64 (naturalAdd lrProgramBase place)) 1 1 1 1 1 lrParameterBytes"
    assert old in text
    module.write_text(text.replace(old, "(lrWord64 (naturalAdd lrProgramBase place)) 1 1 1 2 1 lrParameterBytes"))
    result = subprocess.run([sys.executable, "-m", "bobc", "check", "LinReg/Build/NativeHost.bob"],
                            capture_output=True, text=True, cwd=tmp_path, timeout=300,
                            env={**os.environ, "PYTHONPATH": str(REPO / "compiler"), "BOBC_CACHE_DIR": "off"})
    assert result.returncode == 1 and "Traceback" not in result.stderr, result.stderr
    assert "launch 1 (linreg-predict) runs blocks of (64, 2, 1), but linreg-predict.sass is written for (64, 1, 1)" in result.stderr
    assert ("launch it with block y 1 and z 1, or, if linreg-predict.sass's code indexes a block of (64, 2, 1) "
            "(SR_TID.Y, SR_TID.Z), declare it: //@ block 64 2") in result.stderr, result.stderr
