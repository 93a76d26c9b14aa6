"""The import hint for an unknown name names only a module that declares that whole name (probe s43
langsound finding 2): the scan matched `def NAME\\b`, and `-` and `'` are not word characters to a
regular expression although they are to a name (docs/language.md: `nat-add`, `x'`), so `nat` was
said to be "defined in A.M" for a module that defines `nat-thing`, and `succ` for one with `succ'`.

Expected by the name rule in docs/language.md: `nat`, `succ`, `a-b` are names of their own."""
from __future__ import annotations

import pytest

from bobc.language.suggest import modules_declaring


@pytest.mark.parametrize("declared, asked, found", [
    ("nat-thing", "nat", False),
    ("succ'", "succ", False),
    ("a-b-c", "a-b", False),
    ("nat", "nat", True),
    ("a-b", "a-b", True),
    ("x'", "x'", True),
])
def test_only_the_whole_name_is_found(tmp_path, declared, asked, found):
    (tmp_path / "A").mkdir()
    (tmp_path / "A" / "M.bob").write_text(f"module A.M\ndef {declared} : Nat = 1\n", encoding="utf-8")
    assert (modules_declaring(asked, [tmp_path]) == [("A.M", tmp_path / "A" / "M.bob")]) is found


def test_a_family_name_ends_the_same_way(tmp_path):
    (tmp_path / "A").mkdir()
    (tmp_path / "A" / "M.bob").write_text("module A.M\nfamily Box-two : Type 0\nconstructor C\n"
                                          "end-family\n", encoding="utf-8")
    assert modules_declaring("Box", [tmp_path], "family") == []
    assert [m for m, _ in modules_declaring("Box-two", [tmp_path], "family")] == ["A.M"]
