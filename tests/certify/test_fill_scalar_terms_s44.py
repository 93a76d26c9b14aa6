"""Probe s44 numpyfree finding 3: a fill's scalar shared in the language was walked as a tree.

`def twice = (lambda s . Add s s)` applied n times is n lines of plan and, in the host's postfix
program (runtime_c/plan_fill.c terms, bobc.plan.host Scalar.postfix), 2^(n+1) - 1 terms: extraction
built them one by one (n = 18: several seconds, n = 40: days), then the generated C would hold
them.  Extraction now stops past bobc.plan.host.SCALAR_TERMS (1,024) terms and refuses the fill at
its value.  Expected counts by hand: n doublings of one constant are 2^n constants and 2^n - 1 adds."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from bobc.plan.host import SCALAR_TERMS

REPO = Path(__file__).resolve().parents[2]
NO_FILLS = "    (constructor NvidiaPlanHostFills NvidiaPlanHostFillsEnd)"
HALF = ("(constructor NvidiaPlanHostScalar NvidiaPlanHostScalarConstant "
        "(constructor NvidiaPlanHostConstant NvidiaPlanHostRatio 1 2))")
TWICE = ("def lrTwice = (lambda unrestricted s : (family NvidiaPlanHostScalar) . "
         "(constructor NvidiaPlanHostScalar NvidiaPlanHostScalarAdd s s))\n\n")


def linreg_with_doublings(tmp_path, n: int) -> Path:
    """LinReg with one binary32 fill at launch 0's byte 48 whose value is 1/2 doubled n times."""
    shutil.copytree(REPO / "examples" / "linear_regression" / "LinReg", tmp_path / "LinReg")
    plan = tmp_path / "LinReg" / "Build" / "NativeHost.bob"
    fill = ("    (constructor NvidiaPlanHostFills NvidiaPlanHostFillsNext\n"
            "      (constructor NvidiaPlanHostFill NvidiaPlanHostFillValue 0 48 0 "
            "(constructor NvidiaPlanHostEncoding NvidiaPlanHostEncodeBinary32)\n"
            f"        {'(lrTwice ' * n}{HALF}{')' * n})\n" + NO_FILLS + ")")
    text = plan.read_text()
    assert text.count(NO_FILLS) == 1 and text.count("\ndef ") > 0
    first = text.index("\ndef ") + 1
    plan.write_text(text[:first] + TWICE + text[first:].replace(NO_FILLS, fill))
    return plan


def check(plan: Path, cwd: Path) -> subprocess.CompletedProcess:
    env = dict(os.environ, BOBC_CACHE_DIR="off", PYTHONPATH=str(REPO / "compiler"))
    return subprocess.run([sys.executable, "-m", "bobc", "check", str(plan)], capture_output=True, text=True,
                          env=env, cwd=cwd, timeout=600)


@pytest.mark.parametrize("n", [9, 10, 40])
def test_a_fill_shared_into_more_terms_than_the_host_takes_is_refused_at_once(tmp_path, n):
    terms = 2 ** n + 2 ** n - 1
    checked = check(linreg_with_doublings(tmp_path, n), tmp_path)
    assert "Traceback" not in checked.stderr
    if terms <= SCALAR_TERMS:
        assert checked.returncode == 0, checked.stderr
        return
    assert checked.returncode == 1, checked.stderr
    assert "NativeHost.bob:" in checked.stderr
    assert f"fill 0's value is a program of more than {SCALAR_TERMS:,} terms" in checked.stderr
