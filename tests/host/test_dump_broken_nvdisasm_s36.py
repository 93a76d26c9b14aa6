"""`bobc dump` with an nvdisasm that does not work (BOBC_NVDISASM naming a script
that fails, or one that prints no listing): one refusal naming the tool and what to do, as `bobc
disasm` and `bobc sim` refuse it -- they printed "(nvdisasm refuses it: ...)" on every instruction
line and exited 0, blaming the code (probe s36 exitcodes finding 5).  `bobc diff` reads texts
through the same function (decode._instruction_text) for the instructions that differ."""
from __future__ import annotations

from pathlib import Path

import pytest

from bobc.cli import main

REPO = Path(__file__).resolve().parents[2]
PLAN = REPO / "examples/bob/Bob/Build/NativeHost.bob"


@pytest.fixture(scope="module")
def images(tmp_path_factory):
    folder = tmp_path_factory.mktemp("broken-nvdisasm") / "images"
    assert main(["build", str(PLAN), "--target", "sm_90", "--emit-images", str(folder)]) == 0
    return folder


@pytest.mark.parametrize("body, said", [
    ("echo 'nvdisasm: cannot load libnvdisasm' >&2; exit 3", "it fails on one NOP (nvdisasm: cannot load libnvdisasm)"),
    ("echo garbage", "it lists 0 instructions for one NOP"),
])
def test_dump_refuses_an_nvdisasm_that_does_not_work(images, tmp_path, monkeypatch, capsys, body, said):
    from bobc.nvidia import decode
    tool = tmp_path / "nvdisasm"
    tool.write_text("#!/bin/sh\n" + body + "\n")
    tool.chmod(0o755)
    monkeypatch.setenv("BOBC_NVDISASM", str(tool))
    monkeypatch.setattr(decode, "_TEXTS", {})        # texts a working nvdisasm read earlier here
    capsys.readouterr()
    assert main(["dump", str(images)]) == 1
    out, err = capsys.readouterr()
    assert f"nvdisasm at {tool} does not work: {said}" in err
    assert "BOBC_NVDISASM" in err and "refuses it" not in out + err
