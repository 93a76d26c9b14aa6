"""Module search path, module names, import cycles, visibility and duplicates."""
from __future__ import annotations

import pytest

from bobc.errors import BobcError
from bobc.language import load_program
from bobc.targets import SM86


def write(root, relative, text):
    path = root / relative
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def error_of(call):
    with pytest.raises(BobcError) as caught:
        call()
    return caught.value.render()


@pytest.fixture
def no_specs(tmp_path, monkeypatch):
    empty = tmp_path / "no-specs"
    empty.mkdir()
    monkeypatch.setenv("BOBC_SPECS", str(empty))
    return empty


def test_plan_root_then_include_then_specs(tmp_path, monkeypatch):
    specs = tmp_path / "specs"
    monkeypatch.setenv("BOBC_SPECS", str(specs))
    write(specs, "Lib/Value.bob", "module Lib.Value\ndef where = b\"specs\"\n")
    write(specs, "Lib/Other.bob", "module Lib.Other\ndef other = b\"specs other\"\n")
    write(tmp_path / "extra", "Lib/Value.bob", "module Lib.Value\ndef where = b\"include\"\n")
    plan = write(tmp_path / "plans", "App/Main.bob",
                 "module App.Main\nimport Lib.Value\nimport Lib.Other\ndef answer = where\n"
                 "def second = other\n")
    program = load_program(plan, include=[tmp_path / "extra"], target=SM86)
    assert program.value("answer").value == b"include"
    assert program.value("second").value == b"specs other"
    # the plan's own root comes first
    write(tmp_path / "plans", "Lib/Value.bob", "module Lib.Value\ndef where = b\"root\"\n")
    assert load_program(plan, include=[tmp_path / "extra"], target=SM86).value("answer").value == b"root"


def test_modules_are_parsed_once(tmp_path, no_specs):
    write(tmp_path, "Shared.bob", "module Shared\ndef one = 1\n")
    write(tmp_path, "Left.bob", "module Left\nimport Shared\ndef left = one\n")
    write(tmp_path, "Right.bob", "module Right\nimport Shared\ndef right = one\n")
    plan = write(tmp_path, "Top.bob", "module Top\nimport Left\nimport Right\n"
                                      "def both = (nat-add left right)\n")
    program = load_program(plan, target=SM86)
    assert program.value("both").value == 2
    assert program.module_order == ["Shared", "Left", "Right", "Top"]


def test_module_name_must_match_path(tmp_path, no_specs):
    plan = write(tmp_path, "App/Main.bob", "module App.Mian\ndef x = 1\n")
    message = error_of(lambda: load_program(plan, target=SM86))
    assert "Main.bob:1:8: error: module App.Mian is in" in message
    write(tmp_path, "Lib.bob", "module Library\ndef x = 1\n")
    plan = write(tmp_path, "Top.bob", "module Top\nimport Lib\n")
    assert "declares module Library, but it was imported as Lib" in error_of(lambda: load_program(plan, target=SM86))


def test_unknown_module_names_the_chain_and_folders(tmp_path, no_specs):
    write(tmp_path, "Middle.bob", "module Middle\nimport Missing.Piece\n")
    plan = write(tmp_path, "Top.bob", "module Top\nimport Middle\n")
    message = error_of(lambda: load_program(plan, target=SM86))
    assert "Middle.bob:2:8: error: unknown module Missing.Piece: no Missing/Piece.bob in" in message
    assert str(no_specs) in message
    assert "Top -> Middle -> Missing.Piece" in message


def test_import_cycle_is_refused_with_the_cycle(tmp_path, no_specs):
    write(tmp_path, "A.bob", "module A\nimport B\n")
    write(tmp_path, "B.bob", "module B\nimport C\n")
    write(tmp_path, "C.bob", "module C\nimport A\n")
    plan = write(tmp_path, "Top.bob", "module Top\nimport A\n")
    message = error_of(lambda: load_program(plan, target=SM86))
    assert "C.bob:2:8: error: import cycle: A -> B -> C -> A" in message


def test_imports_are_not_re_exported(tmp_path, no_specs):
    write(tmp_path, "Base.bob", "module Base\ndef base = 1\n")
    write(tmp_path, "Middle.bob", "module Middle\nimport Base\ndef middle = base\n")
    plan = write(tmp_path, "Top.bob", "module Top\nimport Middle\ndef top = base\n")
    message = error_of(lambda: load_program(plan, target=SM86))
    assert "Top.bob:3:11: error: unknown name base" in message
    assert "base is defined in Base: import it" in message


def test_duplicate_definitions_across_visible_modules(tmp_path, no_specs):
    write(tmp_path, "One.bob", "module One\ndef shared = 1\n")
    write(tmp_path, "Two.bob", "module Two\n\ndef shared = 2\n")
    plan = write(tmp_path, "Top.bob", "module Top\nimport One\nimport Two\n")
    message = error_of(lambda: load_program(plan, target=SM86))
    assert "Top.bob:3:8: error: definition shared is defined twice" in message
    assert "One.bob:2:5" in message and "Two.bob:3:5" in message


def test_duplicate_definition_in_one_module(tmp_path, no_specs):
    plan = write(tmp_path, "Top.bob", "module Top\ndef x = 1\ndef x = 2\n")
    assert "Top.bob:3:5: error: definition x is declared twice in Top (first at" in \
        error_of(lambda: load_program(plan, target=SM86))


def test_qualified_names_reach_any_loaded_module(tmp_path, no_specs):
    write(tmp_path, "Deep/Inner.bob", "module Deep.Inner\ndef secret = 7\n")
    write(tmp_path, "Middle.bob", "module Middle\nimport Deep.Inner\ndef m = secret\n")
    plan = write(tmp_path, "Top.bob", "module Top\nimport Middle\n")
    program = load_program(plan, target=SM86)
    assert program.value("Deep.Inner.secret").value == 7
    assert program.definition_span("m").line == 3
    assert str(program.modules["Deep.Inner"].path).endswith("Deep/Inner.bob")


def test_an_include_that_is_not_a_folder_is_refused(tmp_path, no_specs):
    from bobc.language.modules import ModuleError

    plan = write(tmp_path, "Main.bob", "module Main\ndef one = 1\n")
    with pytest.raises(ModuleError, match="include folder .*absent is not a folder"):
        load_program(plan, include=[tmp_path / "absent"], target=SM86)
