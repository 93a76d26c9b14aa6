"""A module with no native host, or an --entry it does not define, is refused in the words of
the command the user ran (probe s39 leftovers3 finding 2): `bobc run` and `bobc sim` said "for a
build to start from", "the native host a build starts from" and "build the module that defines
the host", as if the user had run `bobc build`.  The build's own words are unchanged."""
from __future__ import annotations

from pathlib import Path

import pytest

from bobc.cli import main

ROOT = Path(__file__).resolve().parents[1]
MODEL = ROOT / "examples/linear_regression/LinReg/Model.bob"     # the model module: no host of its own
NO_HOST = "LinReg.Model defines no native host (a definition of type (family NvidiaPlanHost)) "
# a (family NvidiaPlanHost) definition, or a Bytes one holding a host executable, is what each runs:
# `bobc run PLAN native` runs a native artifact (docs/native-host.md), `bobc sim` a plan host only
RUN_NATIVE = "`bobc run PLAN native ARGUMENTS... --reference --entry NAME` runs"


def argv(command, tmp_path):
    (tmp_path / "record.bin").write_bytes(b"\0" * 8)
    request = ["--input", str(tmp_path / "record.bin"), "--checkpoint-out", str(tmp_path / "c.bin"),
               "--predictions", str(tmp_path / "p.bin"), "--result", str(tmp_path / "r.bin")]
    return {"build": ["build", str(MODEL), "-o", str(tmp_path / "host")],
            "run": ["run", str(MODEL), "train", "--reference", *request],
            "sim": ["sim", str(MODEL), "train", *request]}[command]


@pytest.mark.parametrize("command, for_it, verb, artifacts", [
    ("build", "for a build to start from", "build",
     "are what --entry can build as a native artifact, when one of them holds the host executable"),
    ("run", "for `bobc run` to run", "run",
     f"are native artifacts, which {RUN_NATIVE} when one of them holds the host executable"),
    ("sim", "for `bobc sim` to simulate", "simulate",
     f"are native artifacts, which `bobc sim` does not run: {RUN_NATIVE} one that holds the host executable"),
])
def test_a_module_with_no_host_is_refused_in_the_commands_words(tmp_path, capsys, command, for_it, verb,
                                                                  artifacts):
    assert main(argv(command, tmp_path)) == 1
    err = capsys.readouterr().err.splitlines()
    assert err == [f"bobc {command}: error: {NO_HOST}{for_it}",
                   f"hint: {verb} the module that defines the host (its Build module, e.g. "
                   f"<Model>/Build/NativeHost.bob), or name its definition with --entry; this module's Bytes "
                   f"definitions (linRegInputMagic) {artifacts}"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["record.bin"]


@pytest.mark.parametrize("command, host, verb", [
    ("build", "a build starts from", "build"),
    ("run", "`bobc run` runs", "run"),
    ("native", "`bobc run` runs", "run"),
    ("sim", "`bobc sim` simulates", "simulate"),
])
def test_an_entry_the_module_does_not_define_is_refused_in_the_commands_words(tmp_path, capsys, command, host,
                                                                              verb):
    words = ["run", str(MODEL), "native", "--reference"] if command == "native" else argv(command, tmp_path)
    assert main([*words, "--entry", "nope"]) == 1
    err = capsys.readouterr().err.splitlines()
    name = "run" if command == "native" else command
    assert err == [f"bobc {name}: error: LinReg.Model defines no nope, the native host {host}",
                   f"hint: {verb} the module that defines the host, or name its definition with --entry"]
    assert "build" not in "\n".join(err) or command == "build"
