"""Probe s32 leftovers finding 3: `bobc eval PLAN Std`, where Std is a folder of modules on the search
path (specs/Std), got the generic "no definition Std in ... or its imports / names are looked up in the
plan module and its imports".  It now says NAME is a folder of modules, which (some of) its modules
are, and a definition to name instead; a NAME that is a path (a folder or a file) and a PLAN that is a
folder say what was given and what to pass."""
from __future__ import annotations

import pytest

from bobc.cli import main


@pytest.fixture
def plans(tmp_path):
    folder = tmp_path / "Folders"
    folder.mkdir()
    (folder / "Uses.bob").write_text("module Folders.Uses\n\nimport Std.Natural\n\ndef one : Nat = 1\n")
    (folder / "Other.bob").write_text("module Folders.Other\n\ndef two : Nat = 2\n")
    return folder


def said(capsys, code, *words):
    assert main(["eval", *map(str, words)]) == code
    err = capsys.readouterr().err
    assert "Traceback" not in err and len(err.splitlines()) == 2, err
    return err


def test_a_folder_of_the_standard_library_is_named_a_folder_of_modules(plans, capsys):
    err = said(capsys, 1, plans / "Uses.bob", "Std")
    assert "error: Std is a folder of modules (" in err and "Std.Natural" in err and ", not a definition" in err
    assert "hint: bobc eval evaluates a definition: name one as Module.Path.name, e.g. Std.Natural." in err
    assert "names are looked up" not in err


def test_a_nested_folder_names_an_import_when_the_plan_has_none_of_its_modules(plans, capsys):
    err = said(capsys, 1, plans / "Uses.bob", "Platform.Linux")
    assert "error: Platform.Linux is a folder of modules (" in err and "Platform.Linux.Nvidia." in err
    assert "after `import Platform.Linux.Nvidia." in err and "in Folders.Uses" in err


def test_the_plans_own_folder_suggests_one_of_its_definitions(plans, capsys):
    err = said(capsys, 1, plans / "Uses.bob", "Folders")
    assert "error: Folders is a folder of modules (" in err and "Folders.Other, Folders.Uses" in err
    assert "e.g. Folders.Uses.one" in err
    assert main(["eval", str(plans / "Uses.bob"), "Folders.Uses.one"]) == 0      # the suggestion works
    assert capsys.readouterr().out == "1\n"


def test_a_path_given_as_the_name_is_said_to_be_one(plans, capsys):
    for name, kind in ((plans, "folder"), (plans / "Other.bob", "file")):
        err = said(capsys, 2, plans / "Uses.bob", name)
        assert f"error: {name} is a {kind}, not a definition's name" in err
        assert "then the name of a definition (plain, or Module.Path.name) of Folders.Uses" in err
        assert "e.g. one" in err


def test_a_folder_given_as_the_plan_names_the_modules_in_it(plans, capsys):
    err = said(capsys, 2, plans, "one")
    assert f"error: {plans} is a folder, not a plan module (.bob)" in err
    assert f"e.g. {plans / 'Other.bob'} or {plans / 'Uses.bob'}" in err


def test_a_definition_named_like_a_folder_is_still_evaluated(tmp_path, capsys):
    folder = tmp_path / "Shadow"
    folder.mkdir()
    (folder / "Std.bob").write_text("module Shadow.Std\n\ndef Std : Nat = 7\n")
    assert main(["eval", str(folder / "Std.bob"), "Std"]) == 0
    assert capsys.readouterr().out == "7\n"


def test_a_file_or_folder_spelled_like_a_name_is_said_to_be_one(plans, capsys, monkeypatch):
    """`bobc eval Model.bob Model.bob` and `bobc eval Model.bob Build` from the plan's folder got
    the generic "no definition" (probe s32 today3 finding 5): the path check ran only for a name with
    a part that is no identifier."""
    (plans / "Build").mkdir()
    monkeypatch.chdir(plans)
    for name, kind in (("Uses.bob", "file"), ("Other.bob", "file"), ("Build", "folder")):
        err = said(capsys, 2, "Uses.bob", name)
        assert f"error: {name} is a {kind}, not a definition's name" in err
        assert "hint: bobc eval PLAN NAME takes the plan module's file first" in err and "e.g. one" in err
    err = said(capsys, 1, "Uses.bob", "Missing")            # no such file: the generic refusal
    assert "not a definition's name" not in err and "no definition Missing" in err
    assert main(["eval", "Uses.bob", "one"]) == 0
