"""Identities refused where the plan wrote them (probe s41 messages6 "Found and left", messages7):
- a launch whose identity no region has was placed at its definition (`def lrSGDLaunch`), not at
  the b"..." that is wrong;
- a region of identity b"" was let through to the launch check, which told the launch to "give it
  the identity b\"\"".
The expected places are counted in LinReg's own text (examples/linear_regression/LinReg/Build/
NativeHost.bob): the line holding the edited call, the column of its b"."""
import shutil
import subprocess
import sys
from pathlib import Path

REPOSITORY = Path(__file__).resolve().parents[2]


def _check(tmp_path, old, new):
    shutil.copytree(REPOSITORY / "examples/linear_regression/LinReg", tmp_path / "LinReg")
    plan = tmp_path / "LinReg/Build/NativeHost.bob"
    text = plan.read_text()
    assert text.count(old) == 1
    plan.write_text(text.replace(old, new))
    line = text[:text.index(old)].count("\n") + 1
    column = text.index(old) - (text.rfind("\n", 0, text.index(old)) + 1) + new.index('b"') + 1
    done = subprocess.run([sys.executable, "-m", "bobc", "check", "LinReg/Build/NativeHost.bob"], cwd=tmp_path,
                          capture_output=True, text=True,
                          env={"PYTHONPATH": str(REPOSITORY / "compiler"), "PATH": "/usr/bin:/bin"})
    assert done.returncode == 1, done.stderr
    return done.stderr, line, column


def test_a_launch_identity_no_region_has_is_placed_at_its_bytes(tmp_path):
    """`  (lrLaunch b"linreg-sdg" lrSGDPlace`: line 111 of NativeHost.bob, the b" at column 13."""
    stderr, line, column = _check(tmp_path, '(lrLaunch b"linreg-sgd" lrSGDPlace', '(lrLaunch b"linreg-sdg" lrSGDPlace')
    assert (line, column) == (111, 13)
    assert stderr.startswith(f"bobc check: LinReg/Build/NativeHost.bob:{line}:{column}: error: linRegNativeHost's "
                             "program: launch 2 (linreg-sdg) names identity linreg-sdg, which no region has"), stderr


def test_a_region_of_an_empty_identity_is_refused_at_it(tmp_path):
    """`(lrRegion b"" lrPredictBytes 24 64)`: LinReg's third region (lrRegions lists loss-grad, sgd,
    predict), on line 58, the b" at column 74."""
    stderr, line, column = _check(tmp_path, '(lrRegion b"linreg-predict" lrPredictBytes',
                                  '(lrRegion b"" lrPredictBytes')
    assert (line, column) == (58, 74)
    assert stderr.startswith(
        f"bobc check: LinReg/Build/NativeHost.bob:{line}:{column}: error: linRegNativeHost's program: region 2 "
        "has an empty identity (b\"\"): launches, phases and kernel contracts find a region by its identity; give "
        "it its kernel's identity (the name its SM86Program or SM90Program gives the kernel)\n"), stderr
    assert "give it the identity b\"\"" not in stderr
