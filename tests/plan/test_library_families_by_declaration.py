"""A plan's own family named like a library family (probe s33 soundness finding 7) is not the
library's: a value of it handed to compiler-native-encode is refused, naming both families'
modules, never a KeyError traceback.  The extractor knows a library family by its declaration's
module (bobc.plan.extract.is_library_family), which holds because no two library modules declare
one family name (checked here)."""
from __future__ import annotations

from collections import Counter

import pytest

from bobc.cli import main
from bobc.language import syntax
from bobc.language.modules import parse_cached, specs_folder

MODULE = """module T.G
-- a plan's own family that happens to share a name with the library's
family {family} : Type 0
constructor {family}Value
field unrestricted x : Nat
end-family
def x : Bytes = (compiler-native-encode (family {family}) (record {family} (x = 3)))
def p : (equal Nat (bytes-length x) 0) = (refl Nat 0)
"""


@pytest.mark.parametrize("family, library", [
    ("NvidiaWholeProgramPlan", "Hardware.Nvidia.SM86.Command.WholeProgramPlan"),
    ("SM86Program", None),
])
@pytest.mark.parametrize("verb", [["check"], ["eval", "x"]])
def test_a_plans_family_named_like_the_librarys_is_refused_by_its_module(tmp_path, capsys, monkeypatch,
                                                                         family, library, verb):
    monkeypatch.setenv("BOBC_CACHE_DIR", "off")
    path = tmp_path / "T" / "G.bob"
    path.parent.mkdir()
    path.write_text(MODULE.format(family=family))
    status = main([verb[0], str(path), *verb[1:]])
    err = capsys.readouterr().err
    assert status == 1, err
    assert "Traceback" not in err and "KeyError" not in err
    assert f"got one of T.G's own family {family}, declared at {path}:3:8" in err, err
    if library is None:                 # the module that declares it in the library, found by parsing
        (library,) = [m.name for m in map(parse_cached, specs_folder().rglob("*.bob"))
                      if any(isinstance(d, syntax.FamilyDeclaration) and d.name == family for d in m.declarations)]
    assert f"the library's family {family} (module {library})" in err


def test_no_two_library_modules_declare_one_family_name():
    names = Counter(d.name for path in specs_folder().rglob("*.bob")
                    for d in parse_cached(path).declarations if isinstance(d, syntax.FamilyDeclaration))
    assert names and not [name for name, count in names.items() if count > 1]
