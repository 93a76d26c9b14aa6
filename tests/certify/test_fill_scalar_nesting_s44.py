"""Probe s44 docs13 finding 2: a fill's scalar nested past docs/limits.md's 64 operations (its row "a
fill's scalar: operations nested; values held at once; terms | 64; 32; 1,024") was refused at the
native host's definition (`def linRegNativeHost`), naming no place of the fill and saying nothing to do.

A left-nested sum, ((1/2 + 1/2) + 1/2) + ..., holds 2 values at once and has 2n + 1 terms, so 65
additions are within the stack (32) and the terms (1,024) and meet the nesting bound alone.  The
expected place is where the plan wrote the fill's value (found in the plan's text, not from bobc),
as the stack and terms limits are placed; the bound, 64, is the documented row's."""
from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
NO_FILLS = "    (constructor NvidiaPlanHostFills NvidiaPlanHostFillsEnd)"
HALF = ("(constructor NvidiaPlanHostScalar NvidiaPlanHostScalarConstant "
        "(constructor NvidiaPlanHostConstant NvidiaPlanHostRatio 1 2))")
DOCUMENTED = int(re.search(r"\| a fill's scalar: operations nested; values held at once; terms \| (\d+);",
                           (REPO / "docs" / "limits.md").read_text()).group(1))


def left_nested(additions: int) -> str:
    text = HALF
    for _ in range(additions):
        text = f"(constructor NvidiaPlanHostScalar NvidiaPlanHostScalarAdd {text} {HALF})"
    return text


def linreg_with_fill(tmp_path: Path, scalar: str) -> tuple[Path, int, int]:
    """LinReg with one binary32 fill at launch 0's byte 48 (as test_fill_scalar_stack_s44.py), and
    the line and column (1-based) where its value is written."""
    src = REPO / "examples" / "linear_regression"
    shutil.copytree(src / "LinReg", tmp_path / "LinReg")
    plan = tmp_path / "LinReg" / "Build" / "NativeHost.bob"
    fill = ("    (constructor NvidiaPlanHostFills NvidiaPlanHostFillsNext\n"
            "      (constructor NvidiaPlanHostFill NvidiaPlanHostFillValue 0 48 0 "
            "(constructor NvidiaPlanHostEncoding NvidiaPlanHostEncodeBinary32)\n"
            f"        {scalar})\n" + NO_FILLS + ")")
    text = plan.read_text()
    assert text.count(NO_FILLS) == 1
    text = text.replace(NO_FILLS, fill)
    plan.write_text(text)
    lines = text.splitlines()
    line = next(i for i, l in enumerate(lines) if l.startswith("        (constructor NvidiaPlanHostScalar"))
    return plan, line + 1, lines[line].index("(") + 1


@pytest.mark.parametrize("additions", [DOCUMENTED, DOCUMENTED + 1])
def test_a_fill_nested_past_the_bound_is_refused_at_its_value(tmp_path, additions):
    assert DOCUMENTED == 64
    plan, line, column = linreg_with_fill(tmp_path, left_nested(additions))
    env = dict(os.environ, BOBC_CACHE_DIR="off", PYTHONPATH=str(REPO / "compiler"))
    checked = subprocess.run([sys.executable, "-m", "bobc", "check", str(plan.relative_to(tmp_path))],
                             capture_output=True, text=True, env=env, cwd=tmp_path)
    assert "Traceback" not in checked.stderr
    if additions <= DOCUMENTED:
        assert checked.returncode == 0, checked.stderr
        return
    assert checked.returncode == 1, checked.stderr
    first = checked.stderr.splitlines()[0]
    assert first.startswith(f"bobc check: LinReg/Build/NativeHost.bob:{line}:{column}: error: "), first
    assert f"fill 0's value nests more than {DOCUMENTED} operations" in first
    assert "limits.md" in first and "nest fewer" in first
