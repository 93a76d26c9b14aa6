"""A name given to `bobc eval` with a control character in it (a tab, a newline) is shown with
'?' there, as a path is, so the refusal stays one line (probe s37 sourcetext finding 7: the tab
and the newline reached the message as themselves, splitting it)."""
from __future__ import annotations

import pytest

from bobc.cli import main


@pytest.mark.parametrize("name, said", [
    ("a\tb", "no definition a?b in T.A or its imports"),
    ("T.A.a\nb", "no definition T.A.a?b: T.A defines no a?b"),
    ("T.\nA.a", "no definition T.?A.a: there is no module T.?A"),
])
def test_a_name_with_a_control_character_stays_one_line(tmp_path, capsys, monkeypatch, name, said):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "T").mkdir()
    (tmp_path / "T" / "A.bob").write_text("module T.A\ndef a : Nat = 1\n")
    assert main(["eval", "T/A.bob", name]) == 1
    err = capsys.readouterr().err.splitlines()
    assert err[0].startswith(f"bobc eval: error: {said}"), err
    assert err[0].isprintable() and err[1].startswith("hint: ")
