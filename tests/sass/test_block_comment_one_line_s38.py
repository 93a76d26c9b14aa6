"""Probe s38 texts2 finding 6: a SASS `/* ... */` comment is one line's (sass README); one left
open was read as code -- `/* a block` on its own line was "expected an instruction, found '/* a
block'", `S2R R0, SR_TID.X /* open` "cannot read operand 'SR_TID.X /* open'".  It is refused at
its `/*` saying so.  And a line's comments are read left to right: `/* a // b */` is one comment."""
from __future__ import annotations

import pytest

from bobc.cli import main


@pytest.mark.parametrize("text, line, column", [
    (".kernel k\n/* a block\n   comment */\n  S2R R0, SR_TID.X\n  EXIT\n", 2, 1),
    (".kernel k\n  S2R R0, SR_TID.X /* open\n  EXIT\n", 2, 20),
    (".kernel k\n  S2R R0, SR_TID.X\n  EXIT\n\t/* never closed", 4, 2),
])
def test_an_open_block_comment_is_refused_at_its_start(tmp_path, capsys, monkeypatch, text, line, column):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "k.sass").write_text(text)
    assert main(["asm", "k.sass", "-o", "k.bin", "--arch", "sm_86"]) == 1
    err = capsys.readouterr().err.splitlines()
    assert err[0] == (f"bobc asm: k.sass:{line}:{column}: error: this /* comment is not closed on its line: "
                      f"a SASS block comment ends on the line it begins"), err
    assert err[1].expandtabs(1)[column + 1:column + 3] == "/*"        # the excerpt, after its 2-space indent
    assert err[2].index("^^") == err[1].index("/*")


def test_comments_are_read_left_to_right(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "a.sass").write_text(".kernel k\n  S2R R0, SR_TID.X\n  EXIT\n")
    (tmp_path / "b.sass").write_text(".kernel k\n  S2R R0, /* a // b # c */ SR_TID.X # d /* e\n  EXIT // f /* g\n")
    assert main(["asm", "a.sass", "-o", "a.bin", "--arch", "sm_86"]) == 0
    assert main(["asm", "b.sass", "-o", "b.bin", "--arch", "sm_86"]) == 0
    assert (tmp_path / "a.bin").read_bytes() == (tmp_path / "b.bin").read_bytes()
