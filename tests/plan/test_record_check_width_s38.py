"""An input record check's word width is 1, 2, 4 or 8 bytes; any other is refused at the check, the
message saying which widths are (probe s38 coverage finding 7: a width of 0 was refused as "reads
0-byte words" alone, without the rule; no test reached either branch)."""
from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from bobc.cli import main

REPO = Path(__file__).resolve().parents[2]
EXAMPLE = REPO / "examples/linear_regression/LinReg"
CHECK = 'NvidiaPlanHostCheckWord b"version" 8 8 linRegInputVersion'


@pytest.mark.parametrize("width", [0, 3, 16])
def test_a_word_check_of_another_width_is_refused_at_the_check(tmp_path, monkeypatch, capsys, width):
    shutil.copytree(EXAMPLE, tmp_path / "LinReg")
    host = tmp_path / "LinReg/Build/NativeHost.bob"
    text = host.read_text()
    assert text.count(CHECK) == 1
    host.write_text(text.replace(CHECK, CHECK.replace(" 8 8 ", f" 8 {width} ")))
    line = text[:text.index(CHECK)].count("\n") + 1
    column = len(text[:text.index(CHECK)].rsplit("\n", 1)[-1]) - len("(constructor NvidiaPlanHostRecordCheck ") + 1
    monkeypatch.chdir(tmp_path)
    assert main(["check", "LinReg/Build/NativeHost.bob"]) == 1
    err = capsys.readouterr().err
    assert err.startswith(f"bobc check: LinReg/Build/NativeHost.bob:{line}:{column}: error: linRegNativeHost: input "
                          f"check version reads {width}-byte words; a word is 1, 2, 4 or 8 bytes\n"), err
