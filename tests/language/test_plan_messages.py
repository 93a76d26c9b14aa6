"""Finding 9's message items left after session 29 (probe s29 types finding 9): a form written
without its parentheses, a family without end-family, a definition hiding a built-in or a
primitive, `bobc check`'s native-artifact advice for a library module and its --json fields,
the first error in source order, and the motive's wording."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from bobc.cli import main
from bobc.errors import BobcError
from bobc.language import load_program
from bobc.targets import SM86
from bobc.language.parse import parse_module

REPO = Path(__file__).resolve().parents[2]


def parse_refusal(text):
    with pytest.raises(BobcError) as caught:
        parse_module("module Mean\n" + text, "Mean.bob")
    return caught.value


def check_refusal(tmp_path, text):
    path = tmp_path / "Mean.bob"
    path.write_text("module Mean\n" + text + "\n", encoding="utf-8")
    with pytest.raises(BobcError) as caught:
        load_program(path, target=SM86).check()
    return caught.value


def check(capsys, tmp_path, text, *flags, name="Mean"):
    path = tmp_path / f"{name}.bob"
    path.write_text(f"module {name}\n" + text + "\n", encoding="utf-8")
    status = main(["check", str(path), "--target", "sm_90", *flags])
    out = capsys.readouterr()
    return status, out.out, out.err


# ---- a form written without parentheses ---------------------------------------------------

@pytest.mark.parametrize("value, head, shape", [
    ("let unrestricted x = 1 in x", "let", "(let multiplicity name = value in body)"),
    ("succ zero", "succ", "(succ n)"),
    ("lambda unrestricted x : Nat . x", "lambda", "(lambda multiplicity name : type . body)"),
])
def test_a_form_without_parentheses_says_forms_are_written_in_them(value, head, shape):
    error = parse_refusal(f"def f : Nat = {value}\n")
    assert error.message.startswith("unexpected ")
    assert error.hint.startswith(f"{head} begins a form, and forms are written in parentheses: {shape}")


def test_a_type_written_without_parentheses_gets_the_hint_too():
    error = parse_refusal("def g : pi unrestricted x : Nat . Nat = g\n")
    assert error.message == "unexpected 'unrestricted': expected '='"
    assert error.hint.startswith("pi begins a form")


def test_an_application_without_parentheses_says_how_to_apply():
    error = parse_refusal("def f : Nat = nat-add 1 2\n")
    assert error.message.startswith("unexpected '1'")
    assert error.hint == ("a definition's value is one expression; to apply nat-add, write the "
                          "application in parentheses: (nat-add argument ...)")


def test_a_form_in_parentheses_gets_no_such_hint():
    error = parse_refusal("def f : Nat = (let unrestricted x = 1 x)\n")
    assert "written in parentheses" not in (error.hint or "")


# ---- a family without end-family ----------------------------------------------------------

def test_a_family_without_end_family_names_the_family_and_where_it_began():
    error = parse_refusal("\nfamily Color : Type 0\nconstructor ColorRed\nconstructor ColorBlue\n\n"
                          "def x : Nat = 1\n")
    assert error.message == "unexpected 'def': expected one of 'constructor', 'end-family' or 'field'"
    assert error.hint.startswith("family Color (at 3:1) has no end-family")


def test_a_family_without_end_family_at_the_end_of_the_file():
    error = parse_refusal("def y : Nat = 1\nfamily Shape : Type 0\nconstructor ShapeOne\n"
                          "field unrestricted n : Nat\n")
    assert error.message.startswith("the file ends too early")
    assert error.hint.startswith("family Shape (at 3:1) has no end-family")


def test_a_misspelt_field_line_is_not_called_an_unterminated_family():
    error = parse_refusal("family Shape : Type 0\nconstructor ShapeOne\nfeild unrestricted n : Nat\n"
                          "end-family\n")
    assert "end-family" not in (error.hint or "")


# ---- a definition hiding a built-in or a primitive ----------------------------------------

def test_a_definition_named_as_a_built_in_or_a_primitive_is_warned_about(capsys, tmp_path, cache_dir):
    status, out, err = check(capsys, tmp_path, "def Nat : Type 0 = Bytes\ndef x : Nat = b\"hi\"\n"
                                               "def nat-add : Nat = b\"\"\ndef y : Bytes = b\"\"")
    assert status == 0 and "well typed" in out
    assert "Mean.bob:2:5: warning: definition Nat hides the built-in type Nat: in Mean and the " \
           "modules importing it, Nat means this definition" in err
    assert "Mean.bob:4:5: warning: definition nat-add hides the primitive nat-add" in err
    assert "warning: definition y" not in err and err.count("warning:") == 2
    again = check(capsys, tmp_path, "def Nat : Type 0 = Bytes\ndef x : Nat = b\"hi\"\n"
                                    "def nat-add : Nat = b\"\"\ndef y : Bytes = b\"\"")
    assert again[2] == err                   # a warm check (its stored outcome) warns the same


def test_no_example_spec_or_seed_module_hides_a_built_in():
    from bobc.language.modules import parse_cached
    from bobc.language.resolve import built_in_shadow_warnings

    modules = [*REPO.glob("specs/**/*.bob"), *REPO.glob("examples/**/*.bob")]
    assert len(modules) > 50
    assert [w.render() for path in modules for w in built_in_shadow_warnings(parse_cached(path))] == []


# ---- bobc check of a module without a native host ------------------------------------------

def test_a_library_module_with_bytes_gets_no_native_artifact_advice(capsys, tmp_path, cache_dir):
    status, out, _ = check(capsys, tmp_path, "def x : Bytes = b\"hi\"\ndef y : Nat = 2")
    assert status == 0
    assert "Mean: no native host here, so nothing to certify" in out
    assert "native artifact" not in out and "--entry" not in out


def test_a_module_whose_bytes_reach_a_program_encoder_is_named_an_artifact(capsys, tmp_path, cache_dir):
    # `host` mentions the ELF writer (a let it does not use), so its value may be an executable
    status, out, _ = check(capsys, tmp_path, "import Runtime.NativePhysicalNativeELF\n"
                                             "def data : Bytes = b\"hi\"\n"
                                             "def host : Bytes = (let unrestricted w = "
                                             "nativePhysicalNativeELF in data)", name="Art")
    assert status == 0, out
    assert ("Art: no plan host (NvidiaPlanHost) to certify; host: Bytes, type checked, not evaluated; "
            "`bobc check --entry NAME` evaluates it and holds it to what `bobc build --entry NAME` refuses "
            "(nothing written); `bobc build --entry NAME` builds it as a native artifact") in out
    from bobc.commands.check import EXECUTABLE_ENCODINGS
    from bobc.plan.intrinsics import default_intrinsics
    assert EXECUTABLE_ENCODINGS <= set(default_intrinsics().names())


def test_direct_artifact_names_its_executables_only(capsys):
    plan = REPO / "examples/coppelius/Coppelius/Build/DirectArtifact.bob"
    status = main(["check", str(plan), "-I", str(REPO / "examples/coppelius"), "--json"])
    result = json.loads(capsys.readouterr().out)
    assert status == 0 and result["entry"] is None and result["certified"] is False
    assert result["artifacts"] == ["coppeliusHostExecutable", "coppeliusHost"]


def test_a_seed_003_worker_is_named_an_artifact_and_its_library_is_not(capsys, tmp_path, cache_dir):
    """docs/partitioned-regression.md builds a worker defined in a small Pair module with
    --entry; the library module CoordinateDevice holds Bytes data (cdNumerics) only."""
    folder = str(REPO / "examples/partitioned_regression")
    status, out, _ = check(capsys, tmp_path, "import PartitionedRegression.Build.Workers\n"
                                             "def worker0 : Bytes = (coordinateH200Worker "
                                             "b\"0123456789abcdef\" 0 0 47511 0 1 64)", "-I", folder,
                           name="Pair")
    assert status == 0 and "Pair: no plan host (NvidiaPlanHost) to certify; worker0: Bytes" in out
    device = REPO / "examples/partitioned_regression/PartitionedRegression/Build/CoordinateDevice.bob"
    assert main(["check", str(device), "-I", folder]) == 0
    assert "no native host here" in capsys.readouterr().out


def test_check_json_plan_means_the_file_on_success_and_on_error(capsys, tmp_path, cache_dir):
    status, out, _ = check(capsys, tmp_path, "def y : Nat = 2", "--json")
    passed = json.loads(out)
    assert status == 0 and passed["plan"] == str(tmp_path / "Mean.bob") and passed["module"] == "Mean"
    assert passed["entry"] is None and passed["certified"] is False and passed["artifacts"] == []
    status, out, _ = check(capsys, tmp_path, "def y : Nat = b\"\"", "--json")
    refused = json.loads(out)
    assert status != 0 and refused["plan"] == passed["plan"] and refused["ok"] is False


# ---- the first error in source order -------------------------------------------------------

def test_the_first_error_in_source_order_is_reported(tmp_path):
    error = check_refusal(tmp_path, "def y : Nat = 2\ndef z : Nat = b\"no\"\nfamily Color : Type 0\n"
                                    "constructor ColorRed\nfield unrestricted c : Type 1\nend-family")
    assert error.message.startswith("in z: type mismatch") and error.span.line == 3
    error = check_refusal(tmp_path, "family Color : Type 0\nconstructor ColorRed\nfield unrestricted "
                                    "c : Type 1\nend-family\ndef z : Nat = b\"no\"")
    assert error.message.startswith("in Color: field c of ColorRed has a type in Type 2")


def test_a_definition_before_the_family_it_uses_still_checks(tmp_path):
    path = tmp_path / "Early.bob"
    path.write_text("module Early\ndef c : (family Color) = (constructor Color ColorRed 3)\n"
                    "family Color : Type 0\nconstructor ColorRed\nfield unrestricted n : Nat\n"
                    "end-family\n", encoding="utf-8")
    load_program(path, target=SM86).check()


# ---- the motive's wording --------------------------------------------------------------------

def test_a_motive_returning_a_value_says_what_it_returns(tmp_path):
    error = check_refusal(tmp_path, "family Color : Type 0\nconstructor ColorRed\nend-family\n"
                                    "def c : (family Color) = (constructor Color ColorRed)\n"
                                    "def x : Nat = (eliminate Color (lambda unrestricted s : "
                                    "(family Color) . 3) c (branch ColorRed . 0))")
    assert error.message.endswith("the motive of eliminate Color must return a type (a value of type "
                                  "Type n), but it returns a value of type Nat")
