"""An import whose name differs from a module's only in letter case (`import foo.bar` of
Foo/Bar.bob) is refused naming the file that is there and the spelling to write (probe s39
leftovers3 finding 4): module names are case-sensitive (A.B.C is the file A/B/C.bob,
docs/language.md "Search path"), and the folder is on the search path already, so "add the folder
that holds it with -I" was advice that could not help."""
from __future__ import annotations

import pytest

from bobc.cli import main


@pytest.fixture
def plan(tmp_path, monkeypatch):
    (tmp_path / "Foo").mkdir()
    (tmp_path / "Foo/Bar.bob").write_text("module Foo.Bar\n\ndef one : Nat = 1\n")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("BOBC_CACHE_DIR", str(tmp_path / "cache"))

    def write(imported):
        (tmp_path / "Foo/Main.bob").write_text(f"module Foo.Main\n\nimport {imported}\n\ndef two : Nat = one\n")
        return "Foo/Main.bob"
    return write


@pytest.mark.parametrize("imported", ["foo.bar", "Foo.bar", "FOO.BAR"])
def test_a_letter_case_mismatch_names_the_file_that_is_there(plan, capsys, imported):
    assert main(["check", plan(imported)]) == 1
    err = capsys.readouterr().err.splitlines()
    assert err[0].startswith(f"bobc check: Foo/Main.bob:3:8: error: unknown module {imported}: ")
    assert err[-1] == (f"hint: module names are case-sensitive: Foo/Bar.bob is module Foo.Bar; write "
                       f"`import Foo.Bar` (imported through Foo.Main -> {imported})")
    assert "-I" not in err[-1]


def test_the_spelling_the_hint_gives_checks(plan, capsys):
    assert main(["check", plan("Foo.Bar")]) == 0, capsys.readouterr().err


def test_another_unknown_module_keeps_its_did_you_mean(plan, capsys):
    assert main(["check", plan("Foo.Baz")]) == 1
    hint = capsys.readouterr().err.splitlines()[-1]
    assert hint.startswith("hint: did you mean Foo.Bar? imported through Foo.Main -> Foo.Baz; add the folder")
