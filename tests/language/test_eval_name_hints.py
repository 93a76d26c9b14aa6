"""`bobc eval PLAN NAME` says what NAME is when it is not a definition the plan sees, as `bobc
check` does for the same name in a module (probe s31 stdlib finding 7): a field or a constructor
(with how to use it), a family written Module.Name, a definition of a module the plan does not
import (plain or Module.name), a module that does not exist."""
from __future__ import annotations

import pytest

from bobc.cli import main


@pytest.fixture
def plans(tmp_path):
    folder = tmp_path / "Hints"
    folder.mkdir()
    (folder / "Lists.bob").write_text("module Hints.Lists\n\nimport Std.List\n\ndef one : Nat = 1\n")
    (folder / "Nat.bob").write_text("module Hints.Nat\n\nimport Std.Natural\n\ndef two : Nat = 2\n")
    return folder


def refused(capsys, plan, name):
    assert main(["eval", str(plan), name]) == 1
    err = capsys.readouterr().err
    assert "Traceback" not in err
    return err


def test_a_field_is_named_a_field_with_how_to_read_it(plans, capsys):
    for name in ("stdListHead", "Std.List.stdListHead"):
        err = refused(capsys, plans / "Lists.bob", name)
        assert f"error: {name} is a field, not a definition" in err
        assert "(branch StdListCons stdListHead stdListTail" in err and "did you mean" not in err


def test_a_constructor_is_named_a_constructor(plans, capsys):
    for name in ("StdListCons", "Std.List.StdListCons"):
        err = refused(capsys, plans / "Lists.bob", name)
        assert f"error: {name} is a constructor of family StdList, not a definition" in err
        assert "(constructor StdList StdListCons ...)" in err and "did you mean" not in err


def test_a_qualified_family_is_named_a_family(plans, capsys):
    err = refused(capsys, plans / "Lists.bob", "Std.List.StdList")
    assert "error: Std.List.StdList is a family, not a definition" in err


def test_a_definition_of_a_module_the_plan_does_not_import_says_so(plans, capsys):
    err = refused(capsys, plans / "Nat.bob", "stdListLength")
    assert ("hint: stdListLength is defined in Std.List, which Hints.Nat does not import: "
            "add `import Std.List` to evaluate it") in err
    assert "naturalBitLength" not in err            # before: the only suggestion
    err = refused(capsys, plans / "Nat.bob", "Std.List.stdListLength")
    assert ("error: no definition Std.List.stdListLength: Hints.Nat does not import Std.List, "
            "directly or through its imports") in err
    assert "hint: add `import Std.List` to Hints.Nat to evaluate stdListLength" in err


def test_a_qualified_name_is_suggested_from_its_own_module(plans, capsys):
    err = refused(capsys, plans / "Lists.bob", "Std.List.stdListLengt")
    assert "did you mean Std.List.stdListLength" in err
    err = refused(capsys, plans / "Lists.bob", "Std.Nowhere.x")
    assert "there is no module Std.Nowhere on the search path" in err


# probe s31 (probe-today) finding 4: a module given as the name, a definition asked of a module
# that does not define it, and an empty name were answered with false hints


def test_a_module_given_as_the_name_is_named_a_module(plans, capsys):
    err = refused(capsys, plans / "Lists.bob", "Hints.Lists")       # the plan module itself
    assert "error: Hints.Lists is a module, not a definition" in err
    assert "name one of Hints.Lists's, e.g. one" in err and "no module Hints" not in err
    err = refused(capsys, plans / "Lists.bob", "Std.List")          # an imported one
    assert "error: Std.List is a module, not a definition" in err
    assert "e.g. Std.List." in err and "no module Std" not in err
    err = refused(capsys, plans / "Lists.bob", "Data.Bytes")        # one the plan does not load
    assert "error: Data.Bytes is a module, not a definition" in err
    assert "add `import Data.Bytes` to Hints.Lists, then name one of its definitions, " \
           "e.g. Data.Bytes." in err


def test_a_module_that_does_not_define_the_name_is_not_told_to_be_imported(plans, capsys):
    for module in ("Data.Bytes", "Std.List"):       # not loaded, loaded
        err = refused(capsys, plans / "Nat.bob", f"{module}.naturalAdd")
        assert f"error: no definition {module}.naturalAdd: {module} defines no naturalAdd" in err
        assert "hint: naturalAdd is defined in Std.Natural: write naturalAdd or " \
               "Std.Natural.naturalAdd" in err
        assert "import" not in err
    # loaded only through an import: reached qualified, not plain
    (plans / "Via.bob").write_text("module Hints.Via\n\nimport Hints.Lists\n\ndef three : Nat = 3\n")
    err = refused(capsys, plans / "Via.bob", "Hints.Nat.stdListLength")
    assert "hint: stdListLength is defined in Std.List: write Std.List.stdListLength\n" in err


def test_a_typo_in_a_module_the_plan_does_not_import_gets_a_did_you_mean(plans, capsys):
    err = refused(capsys, plans / "Nat.bob", "Data.Bytes.dataBytesZeross")
    assert "error: no definition Data.Bytes.dataBytesZeross: Data.Bytes defines no " \
           "dataBytesZeross" in err
    assert "hint: did you mean Data.Bytes.dataBytesZeros" in err
    assert "add `import Data.Bytes` to evaluate it" in err
    assert "to evaluate dataBytesZeross" not in err


def test_an_empty_name_is_a_usage_error(plans, capsys):
    for name in ("", " "):
        assert main(["eval", str(plans / "Nat.bob"), name]) == 2
        err = capsys.readouterr().err
        assert "error: the name to evaluate is empty: name a definition" in err
        assert "is defined in" not in err and "Traceback" not in err
