"""Probe s33 fuzzplan findings 1, 3 and 4: a type error is reported as itself (whole, at its place,
the certifier not run on the ill-typed plan); a definition declared a host whose value is none is
refused by its type error, not counted as a second host; a schedule past the certifier's launch
bound is refused as soon as the loop that builds it ends, in seconds."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

REPOSITORY = Path(__file__).resolve().parents[1]
PLAN = "LinReg/Build/NativeHost.bob"


def _linreg(tmp_path: Path, module: str, old: str, new: str) -> Path:
    shutil.copytree(REPOSITORY / "examples/linear_regression/LinReg", tmp_path / "LinReg")
    path = tmp_path / module
    text = path.read_text(encoding="utf-8")
    assert text.count(old) == 1, old
    path.write_text(text.replace(old, new), encoding="utf-8")
    return tmp_path


def _bobc(folder: Path, *args):
    env = {**os.environ, "PYTHONPATH": str(REPOSITORY / "compiler"), "BOBC_CACHE_DIR": str(folder / "cache")}
    return subprocess.run([sys.executable, "-m", "bobc", *args], cwd=folder, env=env, capture_output=True,
                          text=True, timeout=300)


def _line_column(folder: Path, module: str, text: str, at: str | None = None) -> tuple[int, int]:
    """The line holding `text`, and the column of `at` in it (of `text` itself by default)."""
    for number, line in enumerate((folder / module).read_text().splitlines(), 1):
        if text in line:
            return number, line.index(at or text) + 1
    raise AssertionError(text)


def test_a_deleted_argument_is_reported_as_the_type_error_eval_reports(tmp_path):
    old = "      (lrPatch 2 (lrPair linRegParameterCount linRegLearningRate) lrNoPatches))))"
    folder = _linreg(tmp_path, PLAN, old, old.replace("(lrPatch 2 (lrPair", "(lrPatch (lrPair"))
    line, column = _line_column(folder, PLAN, "(lrPatch (lrPair", "lrNoPatches")
    checked = _bobc(folder, "check", PLAN)
    evaluated = _bobc(folder, "eval", PLAN, "lrSGDLaunch")
    assert checked.returncode == 1 and "Traceback" not in checked.stderr
    first = checked.stderr.split("\n", 1)[0]
    assert first == f"bobc check: {PLAN}:{line}:{column}: error: in lrSGDLaunch: type mismatch: argument 2 of lrPatch should have type"
    whole = "should have type\n    Nat\n  but has type\n    (family NvidiaParameterPatches)"
    assert whole in checked.stderr and whole in evaluated.stderr
    assert evaluated.stderr.split(": error: ", 1)[1].split("\n")[0] == first.split(": error: ", 1)[1]
    assert "specs/" not in checked.stderr and "eliminate" not in checked.stderr
    refusal = json.loads(_bobc(folder, "check", "--json", PLAN).stdout)
    assert refusal["where"] == f"{PLAN}:{line}:{column}" and refusal["hint"] is None


def test_a_forgotten_wrapper_is_reported_at_the_field_not_at_a_correct_definition(tmp_path):
    folder = _linreg(tmp_path, PLAN, "(lrWord64 lrProgramBase) (lrWord64 lrQMDBase)",
                     "(lrWord64 lrProgramBase) lrQMDBase")
    line, column = _line_column(folder, PLAN, "lrQMDBase (lrWord64")
    checked = _bobc(folder, "check", PLAN)
    assert checked.stderr.startswith(
        f"bobc check: {PLAN}:{line}:{column}: error: in lrWholeProgramPlan: type mismatch: field "
        "nvidiaWholeProgramQMDBase of NvidiaWholeProgramPlanValue should have type\n    (family ModelWord64)\n"
        "  but has type\n    Nat"), checked.stderr


def test_a_definition_declared_a_host_whose_value_is_none_is_refused_by_its_type_error(tmp_path):
    folder = _linreg(tmp_path, PLAN, "def lrSGDPlace : Nat =", "def lrSGDPlace : (family NvidiaPlanHost) =")
    line, _ = _line_column(folder, PLAN, "def lrSGDPlace")
    for command in ("check", "build"):
        done = _bobc(folder, command, PLAN, *(["-o", "host"] if command == "build" else []))
        assert done.returncode == 1
        assert done.stderr.startswith(f"bobc {command}: {PLAN}:{line}:"), done.stderr
        assert "in lrSGDPlace: type mismatch" in done.stderr and "native hosts" not in done.stderr


def test_two_hosts_are_named_with_their_places(tmp_path):
    folder = _linreg(tmp_path, PLAN, "def linRegNativeHost : (family NvidiaPlanHost) =",
                     "def linRegNativeHost : (family NvidiaPlanHost) =")
    with (folder / PLAN).open("a") as plan:
        plan.write("def secondHost : (family NvidiaPlanHost) = linRegNativeHost\n")
    first, _ = _line_column(folder, PLAN, "def linRegNativeHost")
    second, _ = _line_column(folder, PLAN, "def secondHost")
    done = _bobc(folder, "check", PLAN)
    assert done.stderr.startswith(
        f"bobc check: {PLAN}:{second}:5: error: LinReg.Build.NativeHost defines 2 native hosts "
        f"(linRegNativeHost at {PLAN}:{first}:5, secondHost at {PLAN}:{second}:5)"), done.stderr


def test_a_schedule_past_the_launch_bound_is_refused_in_seconds(tmp_path):
    # 33,000 updates of 2 launches each: under the loop guard's 65,536 iterations, over the
    # certifier's 65,536 launches (it once took minutes, then a step-limit hint that cannot help)
    folder = _linreg(tmp_path, "LinReg/Model.bob", "def linRegUpdatesPerInvocation : Nat = 20",
                     "def linRegUpdatesPerInvocation : Nat = 33000")
    done = _bobc(folder, "check", PLAN)
    assert done.returncode == 1
    assert "builds a NvidiaLaunchSchedule of 66,000 launches (33,000 iterations): more than the limit of 65,536" \
        in done.stderr, done.stderr
    assert "--max-evaluation-steps" not in done.stderr
