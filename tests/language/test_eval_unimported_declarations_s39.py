"""`bobc eval PLAN NAME` of a family, a constructor or a field declared by a module the plan does
not import says what NAME is (s39 leftovers4 finding 4): `bobc eval M/B.bob M.C.Fam`, M.C on the
search path declaring `family Fam`, said "no definition M.C.Fam: M.C defines no Fam" -- untrue,
M.C declares it, as a family, which bobc eval does not evaluate in any module; the plain `Fam`
said "no definition Fam in M.B or its imports" with no word of M.C.  Both now name the
declaration, its module and that the plan does not import it, as a family the plan sees is named
(tests/language/test_eval_name_hints.py)."""
from __future__ import annotations

import pytest

from bobc.cli import main

PLAN = "module M.B\n\ndef q : Nat = 1\n"
OTHER = """module M.C

family Fam : Type 0
constructor FamA
field unrestricted famWidth : Nat
end-family

def r : Nat = 2
"""


@pytest.fixture
def plan(tmp_path, monkeypatch):
    (tmp_path / "M").mkdir()
    (tmp_path / "M/B.bob").write_text(PLAN)
    (tmp_path / "M/C.bob").write_text(OTHER)
    monkeypatch.chdir(tmp_path)
    return "M/B.bob"


def refused(capsys, plan, name) -> list[str]:
    assert main(["eval", plan, name]) == 1
    err = capsys.readouterr().err
    assert "Traceback" not in err and "defines no" not in err, err
    return err.splitlines()


@pytest.mark.parametrize("name", ["M.C.Fam", "Fam"])
def test_a_family_of_a_module_not_imported_is_named_a_family(plan, capsys, name):
    lines = refused(capsys, plan, name)
    assert lines[0] == f"bobc eval: error: {name} is a family of M.C, which M.B does not import, not a definition"
    assert lines[1] == ("hint: bobc eval evaluates a definition: name one whose type is (family Fam ...) "
                        "(with `import M.C` in M.B)")


@pytest.mark.parametrize("name", ["M.C.FamA", "FamA"])
def test_a_constructor_of_a_module_not_imported_is_named_a_constructor(plan, capsys, name):
    lines = refused(capsys, plan, name)
    assert lines[0] == (f"bobc eval: error: {name} is a constructor of family Fam of M.C, which M.B does not "
                        "import, not a definition")


@pytest.mark.parametrize("name", ["M.C.famWidth", "famWidth"])
def test_a_field_of_a_module_not_imported_is_named_a_field(plan, capsys, name):
    lines = refused(capsys, plan, name)
    assert lines[0] == (f"bobc eval: error: {name} is a field of constructor FamA of family Fam of M.C, which M.B "
                        "does not import, not a definition")


def test_a_name_no_module_declares_is_still_no_definition(plan, capsys):
    assert main(["eval", plan, "M.C.nope"]) == 1
    assert capsys.readouterr().err.startswith("bobc eval: error: no definition M.C.nope: M.C defines no nope")
    assert main(["eval", plan, "nope"]) == 1
    assert capsys.readouterr().err.startswith("bobc eval: error: no definition nope in M.B or its imports")
