"""`x-1` where x is in scope is one unknown name, and the refusal says so (probe s43 fuzz finding
F5): before, "unknown name x-1" with only the modules searched left a reader who meant x minus 1
without the reason.

Independent reasons: grammar.lark's NAME allows '-' between a name's parts (nat-add is one
name), so `x-1` lexes as one name; docs/language.md's primitive table gives `nat-subtract a b`
as a - b, 0 when b > a."""
from __future__ import annotations

from pathlib import Path

import pytest

from bobc.errors import BobcError
from bobc.language import load_program
from bobc.targets import SM86


def _refusal(folder: Path, body: str, monkeypatch) -> BobcError:
    monkeypatch.setenv("BOBC_SPECS", str(folder / "no-specs"))
    (folder / "M.bob").write_text("module M\ndef x : Nat = 1\n" + body, encoding="utf-8")
    with pytest.raises(BobcError) as caught:
        load_program(folder / "M.bob", target=SM86).check()
    return caught.value


@pytest.mark.parametrize("body, left, right", [
    ("def y : Nat = x-1\n", "x", "1"),
    ("def y : Nat = (lambda unrestricted n : Nat . n-x)\n", "n", "x"),
])
def test_a_subtraction_written_without_spaces_is_explained(tmp_path, monkeypatch, body, left, right):
    error = _refusal(tmp_path, body, monkeypatch)
    assert error.message == f"unknown name {left}-{right}"
    assert f"{left}-{right} is one name" in error.hint
    assert f"(nat-subtract {left} {right})" in error.hint


def test_a_hyphenated_name_whose_first_part_is_unknown_gets_no_subtraction_hint(tmp_path, monkeypatch):
    error = _refusal(tmp_path, "def y : Nat = foo-1\n", monkeypatch)
    assert error.message == "unknown name foo-1"
    assert "nat-subtract" not in error.hint
