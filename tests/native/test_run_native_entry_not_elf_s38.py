"""`bobc run PLAN native --reference --entry DEF` of a Bytes definition that is no x86-64 ELF is
refused as `bobc build --entry DEF` refuses it: the plan's definition of the wrong kind, exit 1
(README: "an `--entry` of the wrong type") -- not "native: DEF: damaged host file: no native
program trailer ... rebuild it", exit 9, as if a host file had been damaged: there is no host, and
rebuilding would give the same bytes (probe s38 coverage finding 8)."""
from __future__ import annotations

import pytest

from bobc.cli import main


@pytest.mark.parametrize("value, starts", [('b"x"', "78"), ('b"#!/bin/sh\\n"', "23212f62696e2f73")])
def test_bytes_that_are_no_executable_are_the_plan_s_refusal(tmp_path, monkeypatch, capsys, value, starts):
    (tmp_path / "U").mkdir()
    (tmp_path / "U/A.bob").write_text(f"module U.A\n\ndef b : Bytes = {value}\n")
    monkeypatch.chdir(tmp_path)
    said = (f"error: b is Bytes but not an x86-64 ELF executable (it starts {starts}); a native artifact is "
            "what nativePhysicalNativeELF gives\n")
    assert main(["build", "U/A.bob", "-o", "host", "--entry", "b"]) == 1
    assert capsys.readouterr().err.startswith(f"bobc build: {said}")
    assert main(["run", "U/A.bob", "native", "--reference", "--entry", "b"]) == 1
    captured = capsys.readouterr()
    assert captured.err.startswith(f"bobc run: {said}"), captured.err
    assert "damaged host file" not in captured.err and captured.out == ""
    assert sorted(p.name for p in tmp_path.iterdir()) == ["U"]
