"""Probe s38 texts2 finding 3 (s37 sourcetext 11): a SASS line took every character Python's
str.split takes as whitespace between its parts -- a no-break space, a vertical tab, the C0
separators 0x1c-0x1f, U+0085, U+2028 -- so `S2R\\x1fR0,\\u2028SR_TID.X` assembled as `S2R R0,
SR_TID.X`, and `.kernel<NBSP>k` was "unknown directive '.kernel k'" (it looks right).  A module
refuses each at its place (docs/language.md: whitespace is spaces, tabs, form feeds, line ends);
a SASS line's code now does too.  In a comment anything goes."""
from __future__ import annotations

import pytest

from bobc.cli import main


@pytest.mark.parametrize("line, odd", [
    ("  S2R\x1fR0, SR_TID.X", "\x1f"),
    ("  S2R R0,\u2028SR_TID.X", "\u2028"),
    ("  S2R\u00a0R0, SR_TID.X", "\u00a0"),
    ("  S2R R0,\x0bSR_TID.X", "\x0b"),
    ("  S2R R0, SR_TID.X\u0085", "\u0085"),
])
def test_an_odd_separator_in_a_sass_line_is_refused_at_its_place(tmp_path, capsys, monkeypatch, line, odd):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "k.sass").write_text(f".kernel k\n{line}\n  EXIT\n", encoding="utf-8")
    assert main(["asm", "k.sass", "-o", "k.bin", "--arch", "sm_86"]) == 1
    first = capsys.readouterr().err.splitlines()[0]
    assert first.startswith(f"bobc asm: k.sass:2:{line.index(odd) + 1}: error: "), first
    assert f"U+{ord(odd):04X}" in first and "spaces and tabs" in first, first
    assert not (tmp_path / "k.bin").exists()


def test_a_no_break_space_in_a_kernel_line_is_named_not_shown_as_a_space(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "k.sass").write_text(".kernel\u00a0k\n  EXIT\n", encoding="utf-8")
    assert main(["asm", "k.sass", "-o", "k.bin", "--arch", "sm_86"]) == 1
    first = capsys.readouterr().err.splitlines()[0]
    assert first.startswith("bobc asm: k.sass:1:8: error: a no-break space (U+00A0)"), first


def test_spaces_tabs_form_feeds_and_odd_characters_in_comments_are_taken(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "a.sass").write_text(".kernel k\n  S2R R0, SR_TID.X\n  EXIT\n")
    (tmp_path / "b.sass").write_text(".kernel\tk\n\tS2R\f R0,\tSR_TID.X // a\u00a0b\u2028c\n  EXIT # \x0b\n")
    assert main(["asm", "a.sass", "-o", "a.bin", "--arch", "sm_86"]) == 0
    assert main(["asm", "b.sass", "-o", "b.bin", "--arch", "sm_86"]) == 0
    assert (tmp_path / "a.bin").read_bytes() == (tmp_path / "b.bin").read_bytes()
