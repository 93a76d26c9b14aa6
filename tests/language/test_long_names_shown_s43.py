"""A long name or word of a plan is shown cut to its beginning and its length by every refusal
that quotes it, not only by "unknown name" (probe s43 fuzz finding F1: a module line whose last
part the fuzzer lengthened by 100,000 characters gave one 300 KB error, the name printed in the
message and again in "rename the file to ...").

The expected bound is docs/limits.md's: a name a message shows is cut to its first 60 characters
and `...(N characters)` (suggest.shown_name), so one error stays a few lines whatever the name;
and a module whose name has a part of more than 255 bytes cannot be a file (a file name's limit,
the same refusal as an import of such a module: modules.path_too_long)."""
from __future__ import annotations

from pathlib import Path

import pytest

from bobc.errors import BobcError
from bobc.language import load_program
from bobc.targets import SM86

LONG = "q" * 3_000

CASES = {
    "multiplicity": f"def x : Nat = (lambda u{LONG} x : Nat . x)\n",
    "number literal": f"def x : Nat = 0x{LONG}\n",
    "unexpected word": f"{LONG}\n",
    "Type before a word": f"def x : Type {LONG} = 1\n",
    "definition twice": f"def x{LONG} : Nat = 1\ndef x{LONG} : Nat = 1\n",
    "family twice": f"family F{LONG} : Type 0\nend-family\nfamily F{LONG} : Type 0\nend-family\n",
    "constructor twice": f"family F : Type 0\nconstructor C{LONG}\nconstructor C{LONG}\nend-family\n",
    "field twice": (f"family F : Type 0\nconstructor C\nfield unrestricted f{LONG} : Nat\n"
                    f"field unrestricted f{LONG} : Nat\nend-family\n"),
    "parameter twice": (f"family F (unrestricted p{LONG} : Nat) (unrestricted p{LONG} : Nat) : Type 0\n"
                        f"end-family\n"),
    "no such constructor": (f"family F{LONG} : Type 0\nconstructor C{LONG}\nend-family\n"
                            f"def x : (family F{LONG}) = (constructor F{LONG} D{LONG})\n"),
    "type error in a long definition": f"def x{LONG} : Nat = b\"\"\n",
}


def _refusal(folder: Path, text: str, monkeypatch) -> str:
    monkeypatch.setenv("BOBC_SPECS", str(folder / "no-specs"))
    monkeypatch.chdir(folder)       # the message's location is the plan as named, not TMPDIR
    (folder / "Long.bob").write_text(text, encoding="utf-8")
    with pytest.raises(BobcError) as caught:
        load_program(Path("Long.bob"), target=SM86).check()
    return caught.value.render()


@pytest.mark.parametrize("case", sorted(CASES))
def test_a_refusal_shows_a_long_name_cut(tmp_path, monkeypatch, case):
    rendered = _refusal(tmp_path, "module Long\n" + CASES[case], monkeypatch)
    assert "characters)" in rendered, rendered[:400]
    # the excerpt line is cut to 100 characters (errors.EXCERPT_WIDTH); the message, the hint:
    # each name 60 characters and its length
    assert max(len(line) for line in rendered.splitlines()) < 400, rendered[:600]
    assert len(rendered) < 1_500


def test_a_module_name_no_file_can_have_is_said_so(tmp_path, monkeypatch):
    rendered = _refusal(tmp_path, f"module Long{LONG}\n", monkeypatch)
    assert "cannot be a file" in rendered and "more than the 255 a file name may have" in rendered
    assert "rename the file to" not in rendered
    assert len(rendered) < 1_000


def test_a_misnamed_module_of_a_possible_name_is_still_told_where_it_belongs(tmp_path, monkeypatch):
    rendered = _refusal(tmp_path, "module Other\n", monkeypatch)
    assert "module Other is in Long.bob, but its name says Other.bob" in rendered
    assert "rename the file to Other.bob" in rendered
