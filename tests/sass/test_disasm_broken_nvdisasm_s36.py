"""`bobc disasm` with an nvdisasm that does not work (BOBC_NVDISASM naming a script that fails, or
one that prints no listing): one refusal naming the tool and what to do, exit 1 -- it called every
word of the code "undecodable" (blaming the code), or exited 0 listing no instruction at all
(probe s36 exitcodes finding 4).  A working nvdisasm's undecodable words are still named each."""
from __future__ import annotations

import pytest

from bobc.cli import main
from bobc.nvtools import nvdisasm
from bobc.sass.oracle import nop_word


def script(folder, body: str) -> str:
    path = folder / "nvdisasm"
    path.write_text("#!/bin/sh\n" + body + "\n")
    path.chmod(0o755)
    return str(path)


@pytest.mark.parametrize("body, said", [
    ("echo 'nvdisasm: cannot load libnvdisasm' >&2; exit 3", "it fails on one NOP (nvdisasm: cannot load libnvdisasm)"),
    ("echo garbage", "it lists 0 instructions for one NOP"),
])
def test_disasm_with_an_nvdisasm_that_does_not_work_refuses_the_tool(tmp_path, monkeypatch, capsys, body, said):
    tool = script(tmp_path, body)
    monkeypatch.setenv("BOBC_NVDISASM", tool)
    code = tmp_path / "code.bin"
    code.write_bytes(nop_word("SM90") * 4)
    status = main(["disasm", str(code), "--arch", "sm_90"])
    out, err = capsys.readouterr()
    assert status == 1, err
    assert f"nvdisasm at {tool} does not work: {said}" in err
    assert "undecodable" not in err + out and "BOBC_NVDISASM" in err


@pytest.mark.skipif(nvdisasm() is None, reason="nvdisasm not installed")
def test_a_working_nvdisasm_still_names_each_undecodable_word(tmp_path, capsys):
    code = tmp_path / "code.bin"
    code.write_bytes(nop_word("SM90") + b"\xff" * 16)
    status = main(["disasm", str(code), "--arch", "sm_90"])
    out, err = capsys.readouterr()
    assert status == 1
    assert "0x0010: undecodable word 0xffffffffffffffff 0xffffffffffffffff" in err
    assert "NOP" in out and "does not work" not in err
