"""`bobc asm --cubin` refuses a contract line that does not parse at its file:line:column, with the
line and a caret (probe s44 docs13 finding 5).

README ("Command line", after the table) promises every mistake one message with file:line:column
and a caret where there is a source place; docs/kernel-contracts.md, "Contract lines: the whole
grammar", shows the refusal as `k.sass:5:5: unknown contract line '//@ blok' ...`.  `bobc check`
said it so (its certifier fault), but `bobc asm --cubin`, which reads the same lines for the cubin,
printed `bobc asm: error: k.sass:1:5: unknown contract line ...`: the place inside the message,
after `error:`, and no source line or caret.  The expected places are those of the words written
into the source here (line 2, the column of `blok` / `scalars`), counted by this test."""
from __future__ import annotations

import pytest

from bobc.cli import main


@pytest.mark.parametrize("line,word,message", [
    ("//@ blok 128", "blok", "unknown contract line '//@ blok' (did you mean block?)"),
    ("//@ param 3 scalars N", "scalars", "unknown kind 'scalars' of parameter word 3 (did you mean scalar?)"),
])
def test_a_contract_line_is_refused_at_its_place_with_a_caret(tmp_path, capsys, monkeypatch, line, word, message):
    monkeypatch.chdir(tmp_path)
    source = tmp_path / "k.sass"
    source.write_text(f".registers 8\n    {line}\n    EXIT\n")
    column = 4 + line.index(word) + 1          # the word that is wrong, after 4 spaces; columns from 1
    assert main(["asm", "k.sass", "--arch", "sm_86", "--cubin", "-o", "k.cubin"]) == 1
    err = capsys.readouterr().err.splitlines()
    assert err[0].startswith(f"bobc asm: k.sass:2:{column}: error: {message}"), err
    assert err[1] == f"      {line}"            # the source line, as every placed message shows it
    assert err[2] == " " * (2 + column - 1) + "^", err
    assert not (tmp_path / "k.cubin").exists()
