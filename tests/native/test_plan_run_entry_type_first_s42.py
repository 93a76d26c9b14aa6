"""`bobc sim PLAN train|predict --entry E` and `bobc run PLAN train|predict --reference --entry E` with E
declared of a type that is no plan host's (probe s42 cli3 finding 1).  A NativePhysicalProgram E (seed
003's and 004's hosts are built from one) was asked for the host's words one by one (`missing --input
RECORD`, exit 2); with them all given, the plan was type checked and E evaluated, then refused as
"should be a value of family NvidiaPlanHost, got NativePhysicalProgram.NativePhysicalProgramValue",
with no word of `bobc run PLAN native`, which runs it.  A Nat E went the same way.  Now E is judged by
its declared type first, as `bobc build` and `bobc check` judge an --entry (exit 1: README, "an
`--entry` of the wrong type"), with or without the words, for --help and --version too, and nothing
is written.  The expected texts are independent of the code: what the plan declares (`def p :
(family NativePhysicalProgram)`, `def n : Nat`) and the command that runs a native program as
docs/native-host.md, "The reference interpreter", gives it."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

REPOSITORY = Path(__file__).resolve().parents[2]
# a native physical program of a platform fragment that evaluates in no time
# (tests/native/test_plan_run_native_entry_first_s41.py's worker0, not yet made Bytes), and a Nat
PLAN = ("module Pair\n\nimport Runtime.OrderedCombine\nimport Runtime.NativePhysicalProgram\n\n"
        "def worker0 : (family NativePhysicalProgram) = (constructor NativePhysicalProgram NativePhysicalProgramValue "
        "b\"pair-v1\" 1 512 (orderedCombineCommands 0 256 264 272 phEnd))\n"
        "def count : Nat = 7\n")

WORDS = ("--input", "record", "--checkpoint-out", "c", "--predictions", "p", "--result", "r")
COMMANDS = {"sim": ("sim",), "run": ("run", "--reference")}


@pytest.fixture
def plan(tmp_path):
    (tmp_path / "plan").mkdir()
    (tmp_path / "plan" / "Pair.bob").write_text(PLAN, encoding="utf-8")
    (tmp_path / "work").mkdir()
    (tmp_path / "work" / "record").write_bytes(b"\0" * 8)
    return tmp_path / "plan" / "Pair.bob"


def bobc(*words, cwd):
    return subprocess.run([sys.executable, "-m", "bobc", *words], cwd=cwd, capture_output=True, text=True,
                          timeout=300, env={**os.environ, "PYTHONPATH": str(REPOSITORY / "compiler")})


@pytest.mark.parametrize("words", [(), WORDS, ("--help",), ("--version",)], ids=["bare", "words", "help", "version"])
@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_a_native_program_entry_is_said_first(command, words, plan):
    work = plan.parent.parent / "work"
    operation = () if words == ("--version",) else ("train",)
    first, *rest = COMMANDS[command]
    done = bobc(first, str(plan), *operation, *rest, *words, "--entry", "worker0", cwd=work)
    assert done.returncode == 1, done.stderr
    assert done.stdout == ""
    assert done.stderr == (
        f"bobc {command}: error: worker0 is a NativePhysicalProgram (a native host's program, not a plan host); "
        f"`bobc {command}` runs a plan host's train or predict\n"
        f"hint: run it with `bobc run {plan} native ARGUMENTS... --reference --entry worker0` "
        f"(docs/native-host.md, \"The reference interpreter\"), or build its host: define "
        f"`def worker0Host : Bytes = (nativePhysicalNativeELF worker0)` and "
        f"`bobc build {plan} --entry worker0Host -o HOST`\n"), done.stderr
    assert sorted(os.listdir(work)) == ["record"]


@pytest.mark.parametrize("words", [(), WORDS], ids=["bare", "words"])
@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_an_entry_of_another_type_is_said_first(command, words, plan):
    work = plan.parent.parent / "work"
    first, *rest = COMMANDS[command]
    done = bobc(first, str(plan), "train", *rest, *words, "--entry", "count", cwd=work)
    assert done.returncode == 1, done.stderr
    assert done.stderr == (
        f"bobc {command}: error: count is of type Nat, not a plan host (family NvidiaPlanHost); "
        f"`bobc {command}` runs a plan host's train or predict\n"
        "hint: name a definition of type (family NvidiaPlanHost) with --entry, or leave --entry out for the "
        "plan module's one\n"), done.stderr
    assert sorted(os.listdir(work)) == ["record"]


def test_the_program_still_runs_natively(plan):
    """The same entry is what `bobc run PLAN native` takes: the refusal above is no refusal of it."""
    done = bobc("run", str(plan), "native", "--version", "--reference", "--entry", "worker0",
                cwd=plan.parent.parent / "work")
    assert done.returncode == 0, done.stderr
