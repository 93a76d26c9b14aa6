"""Probe s44 numpyfree finding 1: a fill's scalar deeper than the C host's stack was certified.

runtime_c/plan_fill.c evaluates a fill's postfix program on a stack of BOBC_SCALAR_STACK (32)
binary64 values and refuses a deeper one ("scalar term 32: deeper than 32 values") at every run;
plan extraction allowed 64 nested operations, and bobc.plan.host.scalar_value (`bobc run
--reference`, `bobc sim`) has no bound, so a right-nested sum of 33 terms was certified, computed by
the reference and the simulator, and refused by every native run.  Extraction now refuses it at the
fill's value.

The expected verdict is the C host's own (tests/plan_fill_driver.py's batch driver): the program
with 33 values at once is refused there, the one with 32 accepted."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))      # tests/: the shared C oracle
import plan_fill_driver  # noqa: E402

from bobc.plan.host import SCALAR_STACK, Scalar     # noqa: E402

REPO = Path(__file__).resolve().parents[2]
NO_FILLS = "    (constructor NvidiaPlanHostFills NvidiaPlanHostFillsEnd)"
HALF = ("(constructor NvidiaPlanHostScalar NvidiaPlanHostScalarConstant "
        "(constructor NvidiaPlanHostConstant NvidiaPlanHostRatio 1 2))")


def right_nested(terms: int) -> str:
    """1/2 + (1/2 + (... + 1/2)): `terms` halves, all held at once before the first add."""
    text = HALF
    for _ in range(terms - 1):
        text = f"(constructor NvidiaPlanHostScalar NvidiaPlanHostScalarAdd {HALF} {text})"
    return text


def right_nested_scalar(terms: int) -> Scalar:
    half = Scalar("constant", value=0.5)
    out = half
    for _ in range(terms - 1):
        out = Scalar("add", (half, out))
    return out


def linreg_with_fill(tmp_path, scalar: str) -> Path:
    """LinReg with one binary32 fill at launch 0's byte 48 (as tests/certify/test_fill_fresh_word32_s43.py)."""
    src = REPO / "examples" / "linear_regression"
    shutil.copytree(src / "LinReg", tmp_path / "LinReg")
    plan = tmp_path / "LinReg" / "Build" / "NativeHost.bob"
    fill = ("    (constructor NvidiaPlanHostFills NvidiaPlanHostFillsNext\n"
            "      (constructor NvidiaPlanHostFill NvidiaPlanHostFillValue 0 48 0 "
            "(constructor NvidiaPlanHostEncoding NvidiaPlanHostEncodeBinary32)\n"
            f"        {scalar})\n" + NO_FILLS + ")")
    text = plan.read_text()
    assert text.count(NO_FILLS) == 1
    plan.write_text(text.replace(NO_FILLS, fill))
    return plan


def test_the_c_host_holds_32_values_and_refuses_33(tmp_path):
    says = plan_fill_driver.compiled_batch(tmp_path)
    fits, deeper = (right_nested_scalar(n) for n in (SCALAR_STACK, SCALAR_STACK + 1))
    assert (fits.stack_depth(), deeper.stack_depth()) == (SCALAR_STACK, SCALAR_STACK + 1)
    c = says([("binary32", 0, 0, fits.postfix()), ("binary32", 0, 0, deeper.postfix())])
    assert c[0] == "00008041"                   # 16.0 as binary32, little-endian
    assert c[1] == f"refused: scalar term {SCALAR_STACK}: deeper than {SCALAR_STACK} values"


@pytest.mark.parametrize("terms", [SCALAR_STACK, SCALAR_STACK + 1])
def test_bobc_check_refuses_a_fill_the_c_host_cannot_hold(tmp_path, terms):
    plan = linreg_with_fill(tmp_path, right_nested(terms))
    env = dict(os.environ, BOBC_CACHE_DIR="off", PYTHONPATH=str(REPO / "compiler"))
    checked = subprocess.run([sys.executable, "-m", "bobc", "check", str(plan)],
                             capture_output=True, text=True, env=env, cwd=tmp_path)
    assert "Traceback" not in checked.stderr
    if terms <= SCALAR_STACK:
        assert checked.returncode == 0, checked.stderr
        return
    assert checked.returncode == 1, checked.stderr
    assert "NativeHost.bob:" in checked.stderr
    assert f"fill 0's value holds {terms} values at once" in checked.stderr
    assert "nest the deep side on the left" in checked.stderr
