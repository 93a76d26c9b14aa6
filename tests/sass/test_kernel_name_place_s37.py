"""A `.kernel` name that is no PTX identifier (a non-ASCII letter, a leading digit) is refused at
the name in its `.kernel` line, with the hint to rename it there (probe s37 sourcetext finding
10: the refusal had no file:line:column, and its hint said to add the `.kernel` line the
source already had).  A name taken from the file's name keeps its hint."""
from __future__ import annotations

import pytest

from bobc.cli import main


@pytest.mark.parametrize("source, place, caret", [
    ("// x\n\t.kernel  kë \n  EXIT\n", "k.sass:2:11", "kë"),
    (".kernel 9k // c\n  EXIT\n", "k.sass:1:9", "9k"),
])
def test_a_kernel_line_name_is_refused_at_the_name(tmp_path, capsys, monkeypatch, source, place, caret):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "k.sass").write_text(source, encoding="utf-8")
    assert main(["asm", "k.sass", "--cubin", "-o", "k.cubin", "--arch", "sm_86"]) == 1
    err = capsys.readouterr().err.splitlines()
    assert err[0].startswith(f"bobc asm: {place}: error: kernel name '{caret}' is not a PTX identifier"), err
    assert err[2].index("^") == err[1].index(caret) and err[2].count("^") == len(caret)
    assert err[3] == "hint: rename the kernel in this `.kernel` line"
    assert not (tmp_path / "k.cubin").exists()


def test_a_file_names_kernel_keeps_its_hint(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "kë.sass").write_text("  EXIT\n", encoding="utf-8")
    assert main(["asm", "kë.sass", "--cubin", "-o", "k.cubin", "--arch", "sm_86"]) == 1
    err = capsys.readouterr().err.splitlines()
    assert err[0].startswith("bobc asm: error: kernel name 'kë' is not a PTX identifier")
    assert err[1].startswith("hint: name the kernel with a `.kernel NAME` line")
