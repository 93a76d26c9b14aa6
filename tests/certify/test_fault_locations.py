"""A certification fault is located where the value at fault was written, not at the native host's
definition (probe s28 newmodel2, finding 5): LinReg (examples/linear_regression) copied with one
edit each, as the probe's LogReg variants were; the host definition is only the place of a fault
whose values do not say where they were written, and the line says so."""
from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path


from bobc.certify.findings import CertificationError, Finding
from bobc.errors import Span
from bobc.plan.model import Resident

REPO = Path(__file__).resolve().parents[2]
HOST = "LinReg/Build/NativeHost.bob"


def variant(tmp_path: Path, old: str, new: str) -> Path:
    shutil.copytree(REPO / "examples/linear_regression/LinReg", tmp_path / "LinReg")
    path = tmp_path / HOST
    text = path.read_text()
    assert old in text, old
    path.write_text(text.replace(old, new, 1))
    return path


def check(plan: Path) -> subprocess.CompletedProcess:
    """`bobc check PLAN` run from the copy's top folder, where the messages show its files as HOST
    (relative: errors.shown_path)."""
    result = subprocess.run([sys.executable, "-m", "bobc", "check", str(plan), "--target", "sm_86"],
                            capture_output=True, text=True, cwd=plan.parents[2])
    assert result.returncode == 1 and "Traceback" not in result.stderr, result.stderr
    return result


def line_of(plan: Path, text: str) -> int:
    return next(n for n, line in enumerate(plan.read_text().splitlines(), 1) if text in line)


def test_an_overlapping_resident_is_located_at_its_address_definition(tmp_path):
    plan = variant(tmp_path, "def lrGradientAddress : Nat = (lrNext lrParametersAddress linRegCheckpointPayloadBytes)",
                   "def lrGradientAddress : Nat = (naturalAdd lrParametersAddress 8)")
    result = check(plan)
    where = f"{HOST}:{line_of(plan, 'def lrGradientAddress')}:5"
    assert result.stderr.startswith(f"bobc check: {where}: error: the plan is not certified"), result.stderr
    assert f"  - {where}: residents parameters" in result.stderr
    assert f"  - {where}: resident gradient at 0x1100000008 is not aligned" in result.stderr
    assert "def linRegNativeHost" not in result.stderr


def test_a_pointer_into_a_gap_is_located_at_the_patch_that_passes_it(tmp_path):
    plan = variant(tmp_path, "(lrPatch 0 lrParametersAddress (lrPatch 1 lrGradientAddress\n      (lrPatch 2",
                   "(lrPatch 0 lrParametersAddress (lrPatch 1 (naturalAdd lrGradientAddress 64)\n      (lrPatch 2")
    result = check(plan)
    line = line_of(plan, "(lrPatch 1 (naturalAdd lrGradientAddress 64)")
    column = plan.read_text().splitlines()[line - 1].index("(lrPatch 1") + 1
    assert f"  - {HOST}:{line}:{column}: launches 2, 4, " in result.stderr, result.stderr
    assert "address 0x1100001040 lies in no resident" in result.stderr


def test_a_region_register_fault_is_located_at_the_region(tmp_path):
    plan = variant(tmp_path, '(lrRegion b"linreg-sgd" lrSGDBytes 16 32)', '(lrRegion b"linreg-sgd" lrSGDBytes 2 32)')
    result = check(plan)
    line = line_of(plan, '(lrRegion b"linreg-sgd" lrSGDBytes 2 32)')
    assert f"  - {HOST}:{line}:" in result.stderr and "region linreg-sgd needs 12 registers but declares 2" \
        in result.stderr, result.stderr


def test_a_misspelt_kernel_source_is_located_at_its_path_with_the_source_meant(tmp_path):
    plan = variant(tmp_path, 'b"LinReg/kernels/linreg-sgd.sass"', 'b"LinReg/kernels/linreg-sgdd.sass"')
    result = check(plan)
    line = line_of(plan, "linreg-sgdd.sass")
    column = plan.read_text().splitlines()[line - 1].index('b"LinReg/kernels/linreg-sgdd.sass"') + 1
    assert result.stderr.startswith(f"bobc check: {HOST}:{line}:{column}: error: kernel source "
                                    f"LinReg/kernels/linreg-sgdd.sass is in none of"), result.stderr
    assert "hint: did you mean LinReg/kernels/linreg-sgd.sass?" in result.stderr
    assert "Realization/Nvidia/SM86/x.sass" not in result.stderr


def test_a_kernel_source_with_no_close_name_is_shown_one_beside_it(tmp_path):
    plan = variant(tmp_path, 'b"LinReg/kernels/linreg-sgd.sass" b"linreg-sgd"', 'b"LinReg/kernels/zzz.sass" b"zzz"')
    result = check(plan)
    assert "did you mean" not in result.stderr
    assert "then specs/), as LinReg/kernels/linreg-" in result.stderr, result.stderr
    assert "Realization/Nvidia/SM86/x.sass" not in result.stderr


HOST_PLACE = Span("P/Build/NativeHost.bob", 279, 5)


def test_a_fault_whose_values_say_nothing_is_the_host_definitions_and_says_so():
    error = CertificationError([Finding("plan", "the plan declares 3 launches but lists 2")],
                               ("pNativeHost", HOST_PLACE))
    assert error.span == HOST_PLACE
    assert (f"  - {HOST_PLACE} (the host pNativeHost, which assembles the plan: the values named here do not "
            f"say where they were written): the plan declares 3 launches") in error.message


def test_the_error_is_located_at_its_first_located_fault():
    at = Span("P/Build/NativeHost.bob", 74, 5)
    error = CertificationError([Finding("plan", "one"), Finding("overlap", "two", at)], ("pNativeHost", HOST_PLACE))
    assert error.span == at
    assert f"  - {at}: two" in error.message and f"  - {HOST_PLACE} (the host pNativeHost" in error.message


def test_where_a_value_was_written_is_no_part_of_the_plan():
    a = Resident("gradient", 0x1100000008, 24, 8, at={"address": Span("a.bob", 1, 1)})
    b = Resident("gradient", 0x1100000008, 24, 8)
    assert a == b and hash(a) == hash(b) and repr(a) == repr(b)
