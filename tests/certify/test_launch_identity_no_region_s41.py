"""A launch whose identity no region has is told to take the identity of the region it runs, not
to "point it at region X's place" for a region X that does not exist (probe messages6 s41:
LinReg's sgd launch written b"linreg-sdg").  The regions listed are LinReg's three, in the order
its lrRegions writes them (examples/linear_regression/LinReg/Build/NativeHost.bob)."""
import shutil
import subprocess
import sys
from pathlib import Path

REPOSITORY = Path(__file__).resolve().parents[2]


def test_a_launch_identity_no_region_has(tmp_path):
    shutil.copytree(REPOSITORY / "examples/linear_regression/LinReg", tmp_path / "LinReg")
    plan = tmp_path / "LinReg/Build/NativeHost.bob"
    old = '(lrLaunch b"linreg-sgd" lrSGDPlace'
    assert plan.read_text().count(old) == 1
    plan.write_text(plan.read_text().replace(old, '(lrLaunch b"linreg-sdg" lrSGDPlace'))
    done = subprocess.run([sys.executable, "-m", "bobc", "check", "LinReg/Build/NativeHost.bob"], cwd=tmp_path,
                          capture_output=True, text=True,
                          env={"PYTHONPATH": str(REPOSITORY / "compiler"), "PATH": "/usr/bin:/bin"})
    assert done.returncode == 1
    assert ("launch 2 (linreg-sdg) names identity linreg-sdg, which no region has (the regions: linreg-loss-grad, "
            "linreg-sgd, linreg-predict); it runs region linreg-sgd's code") in done.stderr
    assert "give it the identity linreg-sgd" in done.stderr
    assert "point it at region linreg-sdg's place" not in done.stderr
