"""An empty or blank `--entry` is a usage error (exit 2) named as the option's value, by every
command that takes --entry, from one place (pipeline.refuse_blank_entry): before, `bobc build`,
`bobc run` and `bobc sim` said "defines no  , the native host a build starts from", exit 1
(probe s32 sasssyntax finding 5; s32 minor finding 1)."""
from __future__ import annotations

from pathlib import Path

import pytest

from bobc import pipeline
from bobc.cli import main
from bobc.errors import UsageError

ROOT = Path(__file__).resolve().parents[1]
PLAN = ROOT / "examples/linear_regression/LinReg/Build/NativeHost.bob"
SAID = {"": "option --entry has an empty value", " ": "option --entry has a blank value (' ')",
        "\t": "option --entry has a blank value ('\\t')"}


def request(tmp_path):
    return ["--input", str(tmp_path / "record.bin"), "--checkpoint-out", str(tmp_path / "c.bin"),
            "--predictions", str(tmp_path / "p.bin"), "--result", str(tmp_path / "r.bin")]


@pytest.mark.parametrize("entry", list(SAID))
@pytest.mark.parametrize("command,verb", [("build", "build"), ("check", "certify"), ("run", "run"),
                                          ("sim", None), ("native", None)])
def test_a_blank_entry_is_a_usage_error_of_every_command(tmp_path, capsys, entry, command, verb):
    argv = {"build": ["build", str(PLAN), "-o", str(tmp_path / "host")],
            "check": ["check", str(PLAN)],
            "run": ["run", str(PLAN), "train", "--reference", *request(tmp_path)],
            "sim": ["sim", str(PLAN), "train", *request(tmp_path)],
            "native": ["run", str(PLAN), "native", "--reference"]}[command]
    assert main([*argv, "--entry", entry]) == 2
    err = capsys.readouterr().err
    name = "run" if command == "native" else command
    assert err.splitlines()[0] == f"bobc {name}: error: {SAID[entry]}"
    assert "defines no" not in err
    if verb:
        assert f"hint: name the definition to {verb} (--entry NAME), or leave --entry out to {verb} " in err
    if command == "native":
        assert "hint: native needs --entry DEF" in err
    assert not (tmp_path / "host").exists() and not (tmp_path / "c.bin").exists()


@pytest.mark.parametrize("entry", ["", "  "])
def test_chosen_entry_refuses_a_blank_entry_itself(entry):
    """The shared choice (also of a recalled program, never loaded) refuses it, exit 2."""
    with pytest.raises(UsageError) as refused:
        pipeline.chosen_entry("P.Build", {"": None, "  ": None, "host": None}, [], entry)
    assert refused.value.exit_code == 2 and "option --entry has" in refused.value.message
    assert pipeline.chosen_entry("P.Build", {"host": None}, [], "host") == "host"


@pytest.mark.parametrize("entry", list(SAID))
def test_sim_refuses_a_blank_entry_before_a_missing_input(capsys, entry):
    """`bobc sim PLAN train --entry ' '` said "missing --input RECORD" first (probe s32 today3
    finding 7); it now refuses the blank --entry first, as build, check and run do."""
    assert main(["sim", str(PLAN), "train", "--entry", entry]) == 2
    err = capsys.readouterr().err.splitlines()
    assert err[0] == f"bobc sim: error: {SAID[entry]}"
    assert err[1] == ("hint: name the definition to simulate (--entry NAME), or leave --entry out to simulate "
                      "the plan module's one NvidiaPlanHost")
