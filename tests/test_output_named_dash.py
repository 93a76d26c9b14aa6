"""`-` as an output path (session 30 review, leftovers finding 1): `bobc build PLAN -o -`, `bobc asm
SRC -o -`, `--emit-images -` and `bobc inspect HOST --extract -` wrote a file or folder literally
named '-' in the current folder, where a user of a Unix compiler means stdout.  bobc writes no output
to stdout (each is published whole or not at all, and stdout carries the command's own lines), so
each is refused as a wrong command line: exit 2, one line naming the option and saying to name a
file, nothing written.  A file named '-' is still reachable as `./-`."""
from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from bobc.cli import main

REPO = Path(__file__).resolve().parents[1]
SOURCE = REPO / "examples/linear_regression/LinReg/kernels/linreg-sgd.sass"
PLAN = REPO / "examples/linear_regression/LinReg/Build/NativeHost.bob"


@pytest.fixture
def folder(tmp_path, monkeypatch):
    shutil.copy(SOURCE, tmp_path / "k.sass")
    monkeypatch.chdir(tmp_path)
    return tmp_path


def refused(capsys, argv: list[str], command: str, option: str, what: str) -> None:
    code = main(argv)
    out, err = capsys.readouterr()
    assert code == 2, err
    assert err.splitlines() == [f"bobc {command}: error: {option} -: bobc writes no output to stdout; "
                                f"name {what} ({option} ./- for one named '-')"]
    assert out == ""


@pytest.mark.parametrize("cubin", [[], ["--cubin"]])
def test_asm_refuses_dash_and_writes_dot_slash_dash(folder, capsys, cubin):
    refused(capsys, ["asm", "k.sass", *cubin, "-o", "-"], "asm", "-o", "a file")
    assert sorted(p.name for p in folder.iterdir()) == ["k.sass"]
    assert main(["asm", "k.sass", *cubin, "-o", "./-"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("./-: ")
    assert sorted(p.name for p in folder.iterdir()) == ["-", "k.sass"]
    assert (folder / "-").stat().st_size > 0


def test_build_refuses_dash_before_building(folder, capsys):
    # refused before the plan is even looked at: a missing plan is not what is said
    refused(capsys, ["build", "no-such-plan.bob", "-o", "-"], "build", "-o", "the host file")
    refused(capsys, ["build", str(PLAN), "--emit-images", "-"], "build", "--emit-images", "a folder")
    refused(capsys, ["build", str(PLAN), "-o", "host", "--emit-images", "-"], "build", "--emit-images", "a folder")
    assert sorted(p.name for p in folder.iterdir()) == ["k.sass"]


def test_build_and_inspect_reach_a_file_named_dash_as_dot_slash_dash(folder, capsys, monkeypatch):
    assert main(["build", str(PLAN), "-o", "./-"]) == 0
    assert capsys.readouterr().out == "wrote ./- (sm_90)\n"
    assert (folder / "-").read_bytes()[:4] == b"\x7fELF"
    refused(capsys, ["inspect", "./-", "--extract", "-"], "inspect", "--extract", "a folder")
    assert sorted(p.name for p in folder.iterdir()) == ["-", "k.sass"]
    elsewhere = folder / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    assert main(["inspect", "../-", "--extract", "./-"]) == 0
    capsys.readouterr()
    assert "program.bin" in {p.name for p in (elsewhere / "-").iterdir()}
