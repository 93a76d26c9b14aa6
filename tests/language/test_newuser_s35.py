"""A new user's first plan (probe s35 newuser): the mistakes written while following
docs/language.md alone get a message that says what the language writes instead."""
from __future__ import annotations

import pytest

from bobc.language import load_program
from bobc.targets import SM86
from bobc.language.parse import ParseError


def _plan(tmp_path, name: str, body: str):
    path = tmp_path / f"{name}.bob"
    path.write_text(f"module {name}\n{body}", encoding="utf-8")
    return path


FAMILY = "family L (A : Type 0) : Type 0\nconstructor Cons\n{field}\nend-family\n"


# ---- finding 1: a field without its multiplicity ------------------------------------------------
# docs/language.md, "Families": fields are `field multiplicity name : type` (the multiplicity is
# required, unlike a family parameter's), so each of these stops inside the field declaration.

@pytest.mark.parametrize("field, column", [
    ("field head : A", 12),                 # the multiplicity left out: stops at ':'
    ("field unrestricted head A", 25),      # the ':' left out
    ("field unrestricted : A", 20),         # the name left out
])
def test_a_field_written_wrong_gets_the_field_shape(tmp_path, field, column):
    path = _plan(tmp_path, "F1", FAMILY.format(field=field))
    with pytest.raises(ParseError) as caught:
        load_program(path, target=SM86)
    assert (caught.value.span.line, caught.value.span.column) == (4, column)
    assert "field multiplicity name : type" in caught.value.hint
    assert "field unrestricted head : A" in caught.value.hint


def test_the_field_shape_is_not_given_for_a_mistake_in_its_type(tmp_path):
    path = _plan(tmp_path, "F2", FAMILY.format(field="field unrestricted head : A )"))
    with pytest.raises(ParseError) as caught:
        load_program(path, target=SM86)
    assert "field multiplicity" not in (caught.value.hint or "")


def test_a_well_written_field_loads(tmp_path):
    path = _plan(tmp_path, "F3", FAMILY.format(field="field unrestricted head : A"))
    load_program(path, target=SM86).check()


# ---- finding 2: an unknown import's did-you-mean offered a module of the import chain ------------
# Importing a module that (directly or not) imports this one is an import cycle, which the
# language refuses (docs/language.md, "Search path"), so it is no remedy to offer.

def test_an_unknown_import_is_not_answered_with_the_module_importing_it(tmp_path):
    from bobc.language.modules import ModuleError

    (tmp_path / "My").mkdir()
    (tmp_path / "My" / "Imp.bob").write_text("module My.Imp\nimport My.Nope\ndef a : Nat = 1\n")
    with pytest.raises(ModuleError, match="unknown module My.Nope") as caught:
        load_program(tmp_path / "My" / "Imp.bob", target=SM86)
    assert "did you mean" not in caught.value.hint      # My.Imp is the only close module


def test_an_unknown_import_is_not_answered_with_a_module_further_up_the_chain(tmp_path):
    from bobc.language.modules import ModuleError

    (tmp_path / "My").mkdir()
    (tmp_path / "My" / "Top.bob").write_text("module My.Top\nimport My.Mid\ndef a : Nat = 1\n")
    (tmp_path / "My" / "Mid.bob").write_text("module My.Mid\nimport My.Tap\ndef b : Nat = 1\n")
    (tmp_path / "My" / "Tip.bob").write_text("module My.Tip\ndef c : Nat = 1\n")
    with pytest.raises(ModuleError, match="unknown module My.Tap") as caught:
        load_program(tmp_path / "My" / "Top.bob", target=SM86)
    hint = caught.value.hint
    assert "did you mean My.Tip?" in hint                # a module the import may really mean
    assert "My.Top" not in hint.split("imported through")[0]


# ---- finding 3: `bobc build` of a module without a host said less once `bobc check` had run ------
# docs/cache.md: a cache never changes a message (a refusal is refused warm as cold).

def test_building_a_module_without_host_says_the_same_cold_and_after_a_check(cache_dir, tmp_path, capsys):
    from bobc.cli import main

    (tmp_path / "My").mkdir()
    plan = tmp_path / "My" / "First.bob"
    plan.write_text("module My.First\ndef six : Nat = 6\ndef greeting : Bytes = b\"hello\"\n")
    build = ["build", str(plan), "-o", str(tmp_path / "host")]

    def refusal(argv):
        status = main(argv)
        err = capsys.readouterr().err
        assert status == 1, err
        return err

    cold = refusal(build)
    assert "defines no native host" in cold
    assert main(["check", str(plan)]) == 0
    capsys.readouterr()
    assert (cache_dir / "programs").is_dir() and list((cache_dir / "programs").iterdir())
    assert refusal(build) == cold
    assert not (tmp_path / "host").exists()
