"""Probe s43 newuser8: a word32 host fill whose value no fresh run can encode was certified.

A new user's MLP filled a parameter word with the constant 1/4 encoded NvidiaPlanHostEncodeWord32
(meaning binary32).  `bobc check` certified the plan; every run without --checkpoint -- the first
`train` of all -- then stopped at the fill with the C host's internal error, exit 1, in a line that
names no fill, no launch and no place in the plan (`a fill's value 0.25 at step 1 is no natural
below 2^32`).  A fresh run's global step is known: t = 0 + the fill's step.  The certifier now
evaluates each word32 fill there and refuses one the host would refuse, at the fill's value.

The expected verdict is the C host's own: runtime_c/plan_fill.c bobc_fill_bytes, compiled by
tests/plan_fill_driver.py, at input step 0 -- refused there iff `bobc check` refuses."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))      # tests/: the shared C oracle
import plan_fill_driver  # noqa: E402

REPO = Path(__file__).resolve().parents[2]
NO_FILLS = "    (constructor NvidiaPlanHostFills NvidiaPlanHostFillsEnd)"
CONSTANT = ("(constructor NvidiaPlanHostScalar NvidiaPlanHostScalarConstant "
            "(constructor NvidiaPlanHostConstant NvidiaPlanHostRatio {} {}))")
STEP = "(constructor NvidiaPlanHostScalar NvidiaPlanHostScalarStep)"

# (fill step, the scalar in the plan's words, the same program as plan_fill.c terms)
CASES = [
    (1, CONSTANT.format(1, 4), [("constant", 0.25)]),                                   # 0.25: refused
    (0, f"(constructor NvidiaPlanHostScalar NvidiaPlanHostScalarSubtract {CONSTANT.format(2, 1)} {STEP})",
     [("constant", 2.0), ("step", 0.0), ("subtract", 0.0)]),                            # 2 - 0: accepted
    (3, f"(constructor NvidiaPlanHostScalar NvidiaPlanHostScalarSubtract {CONSTANT.format(2, 1)} {STEP})",
     [("constant", 2.0), ("step", 0.0), ("subtract", 0.0)]),                            # 2 - 3: refused
    (1, f"(constructor NvidiaPlanHostScalar NvidiaPlanHostScalarMultiply {STEP} {CONSTANT.format(3, 1)})",
     [("step", 0.0), ("constant", 3.0), ("multiply", 0.0)]),                            # 3: accepted
]


@pytest.fixture(scope="module")
def c_host(tmp_path_factory):
    return plan_fill_driver.compiled(tmp_path_factory.mktemp("plan-fill"))


def linreg_with_fill(tmp_path, step: int, scalar: str) -> Path:
    """LinReg with one word32 fill: launch 0's byte 48 (argument 6's low half, a scalar its code
    reads whole with LDC.64; the high half stays patched)."""
    src = REPO / "examples" / "linear_regression"
    shutil.copytree(src / "LinReg", tmp_path / "LinReg")
    plan = tmp_path / "LinReg" / "Build" / "NativeHost.bob"
    fill = ("    (constructor NvidiaPlanHostFills NvidiaPlanHostFillsNext\n"
            f"      (constructor NvidiaPlanHostFill NvidiaPlanHostFillValue 0 48 {step} "
            "(constructor NvidiaPlanHostEncoding NvidiaPlanHostEncodeWord32)\n"
            f"        {scalar})\n" + NO_FILLS + ")")
    text = plan.read_text()
    assert text.count(NO_FILLS) == 1
    plan.write_text(text.replace(NO_FILLS, fill))
    return plan


@pytest.mark.parametrize("step, scalar, terms", CASES)
def test_a_word32_fill_a_fresh_run_cannot_encode_is_refused_at_the_fill(tmp_path, c_host, step, scalar, terms):
    said = c_host("word32", 0, step, terms)
    refused = said.startswith(plan_fill_driver.REFUSED)
    plan = linreg_with_fill(tmp_path, step, scalar)
    env = dict(os.environ, BOBC_CACHE_DIR="off", PYTHONPATH=str(REPO / "compiler"))
    checked = subprocess.run([sys.executable, "-m", "bobc", "check", str(plan), "--json"],
                             capture_output=True, text=True, env=env, cwd=tmp_path)
    assert "Traceback" not in checked.stderr
    if not refused:
        assert checked.returncode == 0, checked.stderr
        return
    assert checked.returncode == 1, checked.stderr
    verdict = json.loads(checked.stdout)
    value = said[len(plan_fill_driver.REFUSED):].split("a fill's value ")[1].split(" at step")[0]
    assert f"fill 0's value at a fresh run's step t = {step} is {value}," in verdict["error"]
    assert "NvidiaPlanHostEncodeBinary32" in verdict["hint"]
    # located at the fill's value, the line that holds its scalar
    line = next(i for i, text in enumerate(plan.read_text().splitlines(), 1) if text.strip() == scalar + ")")
    assert verdict["where"].startswith(f"{plan}:{line}:") or verdict["where"].startswith(
        f"LinReg/Build/NativeHost.bob:{line}:"), verdict["where"]
