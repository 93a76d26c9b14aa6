"""A SASS message quotes a source fragment with its control, format and separator characters
written as escapes (`\\x1b`, `\\u200b`), not sent to the terminal as themselves (probe s37
sourcetext finding 3: a NUL after an EXIT read "cannot read operand ' ' of EXIT", an ESC in an
operand or a directive reached the terminal as an escape sequence)."""
from __future__ import annotations

import pytest

from bobc.cli import main


@pytest.mark.parametrize("source, said", [
    (b".kernel k\n  MOV R1, R2\x1b\n  EXIT\n", "cannot read operand 'R2\\x1b' of MOV"),
    (b".kernel k\n  MOV R1, R2\xe2\x80\x8b\n  EXIT\n", "cannot read operand 'R2\\u200b' of MOV"),
    (b".ker\x1bnel k\n  EXIT\n", "unknown directive '.ker\\x1bnel'"),
    (b".kernel k\n.registers 1\x1b6\n  EXIT\n", "found '1\\x1b6'"),
    # a NUL past the first 4096 bytes (earlier, the file is binary data: bobc.source_bytes) is refused
    # at its place before the instruction is read (probe s38 texts2 finding 2)
    (b"// " + b"x" * 5000 + b"\n.kernel k\n  EXIT\x00\n", "k.sass:3:7: error: a NUL character (U+0000) in the text"),
])
def test_a_control_character_is_quoted_as_an_escape(tmp_path, capsys, monkeypatch, source, said):
    monkeypatch.chdir(tmp_path)
    # a long comment after, so that one control byte is no binary data (bobc.source_bytes: over 5%)
    (tmp_path / "k.sass").write_bytes(source + b"// " + b"x" * 200 + b"\n")
    assert main(["asm", "k.sass", "-o", "k.bin", "--arch", "sm_86"]) == 1
    err = capsys.readouterr().err
    first = err.splitlines()[0]
    assert said in first, err
    assert first.isprintable(), ascii(first)
