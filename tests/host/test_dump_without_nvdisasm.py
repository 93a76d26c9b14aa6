"""`bobc dump` on a machine without nvdisasm (a plain `pip install` of bobc): the same lines,
each instruction's text replaced by "(nvdisasm not installed)", and one notice on stderr
saying what is missing and how to install it (probe s30 packaging finding 7: every line said
so, and stderr said nothing)."""
from __future__ import annotations

from pathlib import Path

from bobc import nvtools
from bobc.cli import main
from bobc.nvidia import decode

REPO = Path(__file__).resolve().parents[2]
PLAN = REPO / "examples/bob/Bob/Build/NativeHost.bob"


def test_dump_without_nvdisasm_says_so_once_and_keeps_its_lines(tmp_path, capsys, monkeypatch):
    images = tmp_path / "images"
    assert main(["build", str(PLAN), "--target", "sm_86", "--emit-images", str(images)]) == 0
    capsys.readouterr()
    monkeypatch.setattr(decode, "_noticed", False)
    with_text = None
    if nvtools.nvdisasm() is not None:        # the test extra installs it
        assert main(["dump", str(images)]) == 0
        with_text = capsys.readouterr()
        assert decode.NOT_INSTALLED not in with_text.out and "nvdisasm" not in with_text.err
    monkeypatch.setattr(nvtools, "nvdisasm", lambda: None)
    monkeypatch.setattr(decode, "_TEXTS", {})              # text read earlier in this process
    assert main(["dump", str(images)]) == 0
    without = capsys.readouterr()
    assert without.err == decode.NOT_INSTALLED_NOTICE + "\n"
    assert "pip install nvidia-cuda-nvdisasm" in without.err
    code = [line for line in without.out.splitlines() if ".code[" in line]
    assert code and all(line.endswith(decode.NOT_INSTALLED) for line in code)
    if with_text is not None:       # every other line as with nvdisasm
        lines = with_text.out.splitlines()
        assert len(lines) == len(without.out.splitlines())
        assert [line for line in lines if ".code[" not in line] == \
            [line for line in without.out.splitlines() if ".code[" not in line]
