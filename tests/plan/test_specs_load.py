"""Every library module under specs/ parses and resolves, together (no name defined twice)."""
import pytest

from plan_support import REPO

SPECS = REPO / "specs"


def module_names():
    return sorted(".".join(p.relative_to(SPECS).with_suffix("").parts) for p in SPECS.rglob("*.bob"))


def test_all_modules_load_together(tmp_path):
    from bobc.language import load_program
    from bobc.targets import SM86
    folder = tmp_path / "Scratch"
    folder.mkdir()
    names = module_names()
    assert "Std.Natural" in names and "Platform.Linux.Nvidia.PlanHost" in names
    text = "module Scratch.All\n\n" + "".join(f"import {name}\n" for name in names) + (
        "\ndef word : Nat = (modelWord32ToNatural (modelWord32FromNaturalTruncated 0x1ffffffff))\n"
        "def unit : (family StdUnit) = stdUnit\n"
        "def ok : (family StdResult Bytes Nat) = (constructor StdResult StdSuccess Bytes Nat 5)\n"
        "def bytes : Nat = (stdByteCountNatural (stdByteCount 4096))\n")
    (folder / "All.bob").write_text(text)
    program = load_program(folder / "All.bob", target=SM86)
    assert program.value("word").value == 0xffffffff
    assert program.value("unit").constructor == "StdUnitValue"
    assert program.force(program.value("ok").fields[0]).value == 5
    assert program.value("bytes").value == 4096
    program.check()            # every library module is well typed


def test_bob_native_host_type_checks():
    """Every module Bob reaches is well typed, and its equalities compute:
    bobInverseRowsDerived (1/256), the learner's and FloatLiteralSpec's
    `Derived` patterns, bobHostIssuesEverySubmission, bobDeviceCertified."""
    from bobc.language import load_program
    from bobc.targets import SM86
    from plan_support import NATIVE_HOST, fake_kernels
    program = load_program(NATIVE_HOST, intrinsics=fake_kernels(), target=SM86)
    program.check()


def test_a_wrong_pattern_is_refused(tmp_path):
    from bobc.errors import BobcError
    from bobc.language import load_program
    from bobc.targets import SM86
    folder = tmp_path / "Scratch"
    folder.mkdir()
    (folder / "Wrong.bob").write_text(
        "module Scratch.Wrong\n\nimport Float32Exact\n\n"
        "def tenth : Nat = 0x3dcccccc\n"      # one ulp below the nearest binary32 to 0.1
        "def tenthDerived : (equal Nat tenth (float32ExactRational 1 10)) = (refl Nat tenth)\n")
    program = load_program(folder / "Wrong.bob", target=SM86)
    with pytest.raises(BobcError, match="tenthDerived"):
        program.check()
