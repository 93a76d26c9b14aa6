"""A wrong device declaration is said once, with its causes, not with the faults that follow
from it; and a certification error's source excerpt stands under the fault it shows
(probe s32 cascade finding 6)."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

from bobc.certify import CertificationError, Finding
from bobc.errors import Span

REPO = Path(__file__).resolve().parents[2]


def bobc(*args, cwd):
    env = dict(os.environ, PYTHONPATH=str(REPO / "compiler"))
    return subprocess.run([sys.executable, "-m", "bobc", *args], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=600)


def test_a_plan_for_a_device_the_target_cannot_run_lists_its_causes_not_the_launch_faults(tmp_path):
    shutil.copytree(REPO / "examples/linear_regression/LinReg", tmp_path / "LinReg")
    host = tmp_path / "LinReg/Build/NativeHost.bob"
    text = host.read_text()
    for name, value in (("lrArchitecture", "qmdSASSVersion", ), ("lrComputeClass", "qmdComputeClass")):
        line = f"def {name} : (family ModelWord32) = (modelWord32FromNaturalTruncated {value})"
        assert line in text
        text = text.replace(line, line.replace(value, {"lrArchitecture": "0x90"}.get(name, "0xCBC0")))
    host.write_text(text)
    result = bobc("check", str(host), "--target", "sm_86", cwd=tmp_path)
    assert result.returncode == 1, result.stderr
    lines = result.stderr.splitlines()
    assert "the plan is not certified (2 faults):" in lines[0], result.stderr
    assert "is not patched" not in result.stderr and "cannot be laid out" not in result.stderr
    bullets = [line for line in lines if line.startswith("  - ")]
    assert len(bullets) == 3, result.stderr
    assert bullets[0].endswith("the plan declares SPA version 0x86 for sm_90, whose SPA version is 0x90")
    assert "NativeHost.bob:28:5: the plan is written for sm_90 and cannot be built for sm_86" in bullets[1]
    assert "NativeHost.bob:28:5: and " in bullets[2] and " launch faults that follow from it, not listed" in bullets[2]
    # the excerpt of line 30 (the headline's place, the SPA version) stands under its fault
    at = lines.index(bullets[0])
    assert lines[at + 1].strip().startswith("def lrSPAVersion"), result.stderr
    assert lines[at + 2].strip().startswith("^"), result.stderr
    assert not any(line.startswith("hint:") for line in lines), result.stderr


def test_the_excerpt_stands_under_the_fault_at_the_errors_place(tmp_path):
    source = tmp_path / "Plan.bob"
    source.write_text("def first : Natural = 1\ndef second : Natural = 2\n")
    error = CertificationError([Finding("plan", "the first is wrong", Span(str(source), 2, 5)),
                                Finding("plan", "the second is wrong", Span(str(source), 1, 5)),
                                Finding("plan", "the third is wrong", None)],
                               ("host", Span(str(source), 1, 1)))
    lines = error.render().splitlines()
    assert lines[0].endswith("error: the plan is not certified (3 faults):")
    assert lines[1].endswith(":2:5: the first is wrong")
    assert lines[2] == "  def second : Natural = 2"
    assert lines[3] == "      ^"
    assert lines[4].endswith(":1:5: the second is wrong")
    assert lines[5].endswith("the third is wrong")
    assert len(lines) == 6
