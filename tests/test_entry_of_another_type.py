"""`--entry DEF` of a definition that is neither a native artifact (Bytes) nor a host plan
names DEF's type as `bobc eval --type` prints it, cut as a message cuts a term (probe s30 cli
finding 5): a function was "of type a type" (describe() of its pi type: every type value is
"a type")."""
from __future__ import annotations

from pathlib import Path

import pytest

from bobc.cli import main

REPO = Path(__file__).resolve().parents[1]
WHAT = ("; `bobc build` builds a native artifact (Bytes: an ELF, e.g. nativePhysicalNativeELF program) "
        "or a host plan (family NvidiaPlanHost)")
# under `bobc check`, check's own words, not build's (probe s32 errors finding 10; minor finding 5)
CHECKS = WHAT.replace("`bobc build` builds", "`bobc check` checks")
WIDE = " . ".join(f"(lambda unrestricted {name} : Nat" for name in "abcdefghijklmnop") + " . a" + ")" * 16

MODULE = f"""module Probe.Kinds

def aligned = (lambda unrestricted bytes : Nat . bytes)
def count : Type 0 = Nat
def number : Nat = 7
def wide = {WIDE}
"""


@pytest.fixture
def plan(tmp_path):
    path = tmp_path / "Probe/Kinds.bob"
    path.parent.mkdir()
    path.write_text(MODULE)
    return path


def refusal(capsys, *argv):
    code = main(list(map(str, argv)))
    err = capsys.readouterr().err
    assert code == 1, err
    return err.splitlines()[0]


@pytest.mark.parametrize("entry, shown", [
    ("aligned", "(pi unrestricted bytes : Nat . Nat)"),
    ("count", "Type 0"),
    ("number", "Nat"),
])
def test_entry_names_its_real_type(tmp_path, capsys, plan, entry, shown):
    assert refusal(capsys, "check", plan, "--entry", entry) == f"bobc check: error: {entry} is of type {shown}{CHECKS}"
    assert refusal(capsys, "build", plan, "--entry", entry, "-o", tmp_path / "host") == \
        f"bobc build: error: {entry} is of type {shown}{WHAT}"
    assert not (tmp_path / "host").exists()


def test_entry_type_is_what_eval_type_prints(capsys):
    plan = REPO / "examples/bob/Bob/Build/NativeHost.bob"
    assert main(["eval", str(plan), "bobPageAligned", "--type"]) == 0
    printed = capsys.readouterr().out.strip()
    assert printed == "(pi unrestricted bytes : Nat . Nat)"
    assert refusal(capsys, "check", plan, "--entry", "bobPageAligned") == \
        f"bobc check: error: bobPageAligned is of type {printed}{CHECKS}"


def test_a_long_type_is_cut_as_messages_cut_terms(capsys, plan):
    line = refusal(capsys, "check", plan, "--entry", "wide")
    shown = line.removeprefix("bobc check: error: wide is of type ").removesuffix(CHECKS)
    assert shown.startswith("(pi unrestricted a : Nat . (pi unrestricted b : Nat . ")
    assert "..." in shown and "unrestricted p" not in shown
