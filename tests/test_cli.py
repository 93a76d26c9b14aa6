"""The bobc command line: help is real, mistakes give one line and a non-zero code."""
from __future__ import annotations

import subprocess
import sys

import pytest

from bobc.cli import SUBCOMMANDS, main

EXPECTED = {"check", "eval", "build", "asm", "disasm", "dump", "diff", "inspect", "run", "sim", "cache"}


def bobc(*args):
    return subprocess.run([sys.executable, "-m", "bobc", *args], capture_output=True, text=True)


def test_help_lists_every_subcommand():
    result = bobc("--help")
    assert result.returncode == 0
    for name in EXPECTED:
        assert f"\n    {name} " in result.stdout, name
    assert set(SUBCOMMANDS) == EXPECTED


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_each_subcommand_has_help(name):
    result = bobc(name, "--help")
    assert result.returncode == 0
    assert result.stdout.startswith("usage: bobc " + name)


@pytest.mark.parametrize("argv", [
    ["check", "no/such/plan.bob"],
    ["eval", "no/such/plan.bob", "x"],
    ["build", "no/such/plan.bob"],
    ["asm", "no/such.sass", "-o", "x.bin"],
    ["inspect", "no/such/host"],
])
def test_missing_file_is_one_line_error(argv):
    result = bobc(*argv)
    assert result.returncode != 0
    assert "Traceback" not in result.stderr
    assert "no/such" in result.stderr
    assert len(result.stderr.strip().splitlines()) <= 3


def test_unknown_option_is_usage_error():
    result = bobc("build", "--frobnicate")
    assert result.returncode == 2
    assert "Traceback" not in result.stderr
    assert "unrecognized arguments" in result.stderr or "required" in result.stderr


@pytest.mark.parametrize("typo,meant", [("dunp", "dump"), ("biuld", "build"), ("chek", "check"),
                                        ("inspct", "inspect"), ("dif", "diff")])
def test_a_mistyped_subcommand_gets_did_you_mean(typo, meant):
    result = bobc(typo)
    assert result.returncode == 2
    assert f"invalid choice: '{typo}'" in result.stderr and f"did you mean '{meant}'?" in result.stderr


def test_a_far_subcommand_gets_no_guess():
    result = bobc("frobnicate")
    assert result.returncode == 2 and "did you mean" not in result.stderr


def test_unknown_target_is_refused():
    result = bobc("build", "x.bob", "--target", "sm_99")
    assert result.returncode == 2
    assert "sm_99" in result.stderr


def test_main_returns_exit_code_instead_of_raising(tmp_path, capsys):
    assert main(["check", str(tmp_path / "absent.bob")]) == 2
    assert "absent.bob" in capsys.readouterr().err


def test_build_of_a_module_without_the_host_says_which_to_build(tmp_path):
    from pathlib import Path

    plan = Path(__file__).resolve().parents[1] / "examples/bob/Bob/Build/PhysicalComponents.bob"
    result = subprocess.run([sys.executable, "-m", "bobc", "build", str(plan), "-o", str(tmp_path / "host")],
                            capture_output=True, text=True)
    assert result.returncode == 1
    assert "defines no native host" in result.stderr and "NvidiaPlanHost" in result.stderr
    assert "NativeHost.bob" in result.stderr
    assert "Traceback" not in result.stderr and not (tmp_path / "host").exists()


def test_unwritable_images_folder_is_one_message(tmp_path):
    from pathlib import Path

    plan = Path(__file__).resolve().parents[1] / "examples/bob/Bob/Build/NativeHost.bob"
    blocker = tmp_path / "images"
    blocker.write_bytes(b"a file where the folder should go")
    result = bobc("build", str(plan), "--emit-images", str(blocker))
    assert result.returncode == 8                   # an output failure, as for -o
    assert "Traceback" not in result.stderr
    assert f"{blocker}: cannot write output (--emit-images): is not a folder" in result.stderr
    assert blocker.read_bytes() == b"a file where the folder should go"


def test_eval_type_checks_the_definition_first(tmp_path):
    """An ill-typed definition is refused with file:line:column; --unchecked shows its value."""
    (tmp_path / "M").mkdir()
    plan = tmp_path / "M" / "Bad.bob"
    plan.write_text('module M.Bad\n\ndef good : Nat = 3\ndef bad : Nat = b"abc"\n')
    assert bobc("eval", str(plan), "good").stdout.strip() == "3"
    refused = bobc("eval", str(plan), "bad")
    assert refused.returncode == 1 and refused.stdout == ""
    assert f"{plan}:4:17" in refused.stderr and "should have type" in refused.stderr
    unchecked = bobc("eval", str(plan), "bad", "--unchecked")
    assert unchecked.returncode == 0 and unchecked.stdout.strip() == 'b"abc"'


def test_eval_refuses_a_definition_that_depends_on_an_ill_typed_one(tmp_path):
    """top's own body checks (bad is taken at its declared Nat), but evaluating it would follow
    bad: refused, naming bad and pointing at its body; through a chain and inside a type too."""
    (tmp_path / "M").mkdir()
    plan = tmp_path / "M" / "Top.bob"
    plan.write_text('module M.Top\n\ndef bad : Nat = b"x"\n\ndef top : Nat = bad\n\n'
                    'def chain : Nat = top\n\ndef fine : Nat = 3\n\ndef usesFine : Nat = fine\n')
    for name in ("top", "chain"):
        refused = bobc("eval", str(plan), name)
        assert refused.returncode == 1 and refused.stdout == "", refused.stdout
        assert f"{name} cannot be evaluated: it depends on M.Top.bad, which does not type check" in refused.stderr
        assert f"{plan}:3:17" in refused.stderr and "Traceback" not in refused.stderr
    assert bobc("eval", str(plan), "usesFine").stdout.strip() == "3"
    assert bobc("eval", str(plan), "top", "--unchecked").stdout.strip() == 'b"x"'


# ---------------------------------------------------------------- probe s26 (probe-bob, probe-coppelius)

REPO_ROOT = __import__("pathlib").Path(__file__).resolve().parents[1]
BOB_PLAN = REPO_ROOT / "examples/bob/Bob/Build/NativeHost.bob"


def bobc_in(cwd, *args):
    return subprocess.run([sys.executable, "-m", "bobc", *map(str, args)], capture_output=True, text=True, cwd=cwd)


@pytest.mark.parametrize("flags", [["-o", ""], ["--emit-images", ""], ["--emit-images", "", "-o", "h"]])
def test_build_refuses_an_empty_output_and_never_writes_bob_host(tmp_path, flags):
    (tmp_path / "bob-host").write_bytes(b"the previous host")
    done = bobc_in(tmp_path, "build", BOB_PLAN, *flags)
    assert done.returncode == 2, done.stderr
    assert "has an empty value" in done.stderr and "Traceback" not in done.stderr
    assert (tmp_path / "bob-host").read_bytes() == b"the previous host"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bob-host"]


def test_emit_images_never_writes_through_a_symlink(tmp_path):
    images = tmp_path / "images"
    images.mkdir()
    victim = tmp_path / "victim.txt"
    victim.write_text("precious\n")
    (images / "manifest.json").symlink_to(victim)
    done = bobc_in(tmp_path, "build", BOB_PLAN, "--emit-images", images)
    assert done.returncode == 8, done.stderr
    assert f"{images / 'manifest.json'}: cannot write output (--emit-images): is a symbolic link" in done.stderr
    assert victim.read_text() == "precious\n"
    assert sorted(p.name for p in images.iterdir()) == ["manifest.json"]       # nothing else written


def test_emit_images_refuses_a_missing_parent_and_writes_all_five(tmp_path):
    done = bobc_in(tmp_path, "build", BOB_PLAN, "--emit-images", tmp_path / "a" / "b")
    assert done.returncode == 8 and "does not exist" in done.stderr and not (tmp_path / "a").exists()
    done = bobc_in(tmp_path, "build", BOB_PLAN, "--emit-images", tmp_path / "img")
    assert done.returncode == 0, done.stderr
    assert sorted(p.name for p in (tmp_path / "img").iterdir()) == sorted(
        ["program.bin", "qmd.bin", "push.bin", "gpfifo.bin", "manifest.json"])     # no temporaries, no journal


def test_every_subcommand_defaults_to_sm_90():
    for name in ("check", "eval", "build", "run", "sim", "asm", "disasm"):
        done = bobc(name, "--help")
        assert "default sm_90" in done.stdout.replace("\n", " ").replace("  ", " "), (name, done.stdout)


def test_check_certifies_the_target_build_builds():
    done = bobc("check", BOB_PLAN)
    assert done.returncode == 0 and "certified for sm_90" in done.stdout, done.stdout + done.stderr


def test_unrecognized_arguments_point_at_the_subcommand_help():
    done = bobc("build", BOB_PLAN, "extra", "words")
    assert done.returncode == 2
    assert "unrecognized arguments: extra words" in done.stderr and "(see 'bobc build --help')" in done.stderr


def test_a_folder_given_as_a_file_is_called_a_folder(tmp_path):
    for argv in (["build", tmp_path], ["inspect", tmp_path]):
        done = bobc(*argv)
        assert done.returncode == 2 and f"{tmp_path} is a folder" in done.stderr and "no such file" not in done.stderr


def test_check_with_a_mistyped_entry_is_an_error_naming_the_close_one(tmp_path):
    """A CI step `bobc check --entry NAME` must not pass without certifying anything."""
    done = bobc_in(tmp_path, "check", BOB_PLAN, "--entry", "bobNativHost")
    assert done.returncode == 1, done.stdout + done.stderr
    assert "defines no bobNativHost" in done.stderr and "did you mean bobNativeHost?" in done.stderr
    assert "certified" not in done.stdout


def test_check_json_reports_the_entry_and_a_refusal_as_json(tmp_path):
    import json
    passed = json.loads(bobc_in(tmp_path, "check", BOB_PLAN, "--json").stdout)
    assert passed["ok"] is True and passed["certified"] is True and passed["entry"] == "bobNativeHost"
    copy = tmp_path / "bob"
    __import__("shutil").copytree(REPO_ROOT / "examples/bob/Bob", copy / "Bob")
    components = copy / "Bob/Build/PhysicalComponents.bob"
    old = "def bobSecondMomentAddress : Nat = (bobArenaNext bobFirstMomentAddress bobTableBytes)"
    assert old in components.read_text()
    components.write_text(components.read_text().replace(
        old, "def bobSecondMomentAddress : Nat = (naturalAdd bobFirstMomentAddress 4096)"))
    done = bobc_in(tmp_path, "check", copy / "Bob/Build/NativeHost.bob", "--json")
    assert done.returncode == 1
    refused = json.loads(done.stdout)
    assert refused["ok"] is False and refused["exit_code"] == 1 and "overlap" in refused["error"]
    assert "the plan is not certified" in done.stderr


def test_check_of_a_module_whose_host_is_a_native_artifact_says_so(tmp_path):
    """Coppelius's DirectArtifact defines its host as Bytes (a native artifact): check said 'no native
    host here', and --entry coppeliusHost failed 30 s later extracting a plan host from an ELF.
    Without --entry the artifacts are type checked, not evaluated, and check says so (probe s44
    checkreq: `--entry` evaluates one as build does, tests/certify/test_check_request_s44.py)."""
    plan = REPO_ROOT / "examples/coppelius/Coppelius/Build/DirectArtifact.bob"
    done = bobc_in(tmp_path, "check", plan)
    assert done.returncode == 0, done.stderr
    assert "no plan host (NvidiaPlanHost) to certify; coppeliusHostExecutable, coppeliusHost: Bytes, " \
           "type checked, not evaluated; `bobc check --entry NAME` evaluates one" in done.stdout
    assert "bobc build --entry NAME` builds one as a native artifact" in done.stdout


@pytest.mark.parametrize("words", [["sim", "--images", "imgs", "train"], ["run", "predict", "--reference"],
                                   ["run", "native", "--reference", "--entry", "host"]])
def test_the_plan_left_out_is_said_so(tmp_path, words):
    """Probe s36 newuser2: `bobc sim --images DIR train` (the plan left out: argparse takes the
    operation as the plan) said only "no such file: train"."""
    (tmp_path / "imgs").mkdir()
    done = bobc_in(tmp_path, *words)
    operation = words[3] if words[0] == "sim" else words[1]
    assert done.returncode == 2, done.stderr
    assert done.stderr.splitlines() == [
        f"bobc {words[0]}: error: no such file: {operation}",
        f"hint: {operation} is the operation, and the plan module comes before it: bobc {words[0]} PLAN {operation} ..."]
    (tmp_path / operation).write_text("module X\n")        # a plan that happens to be named so is a plan
    assert "the plan module comes before it" not in bobc_in(tmp_path, *words).stderr
