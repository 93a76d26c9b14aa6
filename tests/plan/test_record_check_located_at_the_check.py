"""A record check's fault (past the record, a word width) was located at the host definition
(`def linRegNativeHost`), not at the check that is wrong; it is now located where the check was
written, as the extractor's other faults are (probe s32 errors finding 10)."""
from __future__ import annotations

import shutil
from pathlib import Path

from bobc.cli import main

REPO = Path(__file__).resolve().parents[2]
CHECK = 'NvidiaPlanHostCheckBytes b"magic" 0 linRegInputMagic'


def test_a_check_past_the_record_is_located_at_the_check(tmp_path, capsys):
    shutil.copytree(REPO / "examples/linear_regression/LinReg", tmp_path / "LinReg")
    plan = tmp_path / "LinReg/Build/NativeHost.bob"
    text = plan.read_text()
    assert text.count(CHECK) == 1
    line = text[:text.index(CHECK)].count("\n") + 1
    plan.write_text(text.replace(CHECK, CHECK.replace(" 0 ", " 5000 ")))
    assert main(["check", str(plan)]) == 1
    err = capsys.readouterr().err.splitlines()
    assert f"NativeHost.bob:{line}:" in err[0].split(": error: ")[0], err[0]       # however the path is shown
    assert "input check magic reads up to byte 5008, past the" in err[0]
    assert 'b"magic" 5000' in err[1]
