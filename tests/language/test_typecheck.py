"""Type checking conformance: typecheck/success/<name>A.bob checks and its
`result` has the type printed in <name>B.txt; typecheck/failure/<name>.bob is
refused (when loading or checking) with every line of <name>.txt in the error."""
from __future__ import annotations

import pytest

from bobc.errors import BobcError
from bobc.language import load_program
from bobc.targets import SM86
from bobc.language.check import check_program
from bobc.language.quote import show_value

from .conftest import cases, expected_fragments


@pytest.mark.parametrize("path", cases("typecheck/success", "*A.bob"))
def test_typecheck_success(path):
    expected = path.with_name(path.name[:-len("A.bob")] + "B.txt").read_text(encoding="utf-8")
    program = load_program(path, target=SM86)
    checker = check_program(program)
    assert show_value(checker.definition_type(program.definition("result"))) + "\n" == expected


@pytest.mark.parametrize("path", cases("typecheck/failure", "*.bob"))
def test_typecheck_failure(path):
    with pytest.raises(BobcError) as caught:
        load_program(path, target=SM86).check()
    rendered = caught.value.render()
    for fragment in expected_fragments(path.with_suffix(".txt")):
        assert fragment in rendered


def test_check_command(tmp_path, capsys):
    from bobc.cli import main
    good = tmp_path / "Good.bob"
    good.write_text("module Good\ndef x : Nat = 1\n", encoding="utf-8")
    assert main(["check", str(good)]) == 0
    bad = tmp_path / "Bad.bob"
    bad.write_text("module Bad\ndef x : Nat = b\"one\"\n", encoding="utf-8")
    assert main(["check", str(bad)]) == 1
    assert "Bad.bob:2:15: error: in x: type mismatch" in capsys.readouterr().err


def test_eval_type_flag_prints_an_inferred_type(tmp_path, capsys):
    from bobc.cli import main
    plan = tmp_path / "Typed.bob"
    plan.write_text("module Typed\ndef pairUp = (lambda unrestricted n : Nat . "
                    "(lambda unrestricted b : Bytes . (bytes-append b (bytes-from-nat-le n 4))))\n",
                    encoding="utf-8")
    assert main(["eval", str(plan), "pairUp", "--type"]) == 0
    assert capsys.readouterr().out.strip() == \
        "(pi unrestricted n : Nat . (pi unrestricted b : Bytes . Bytes))"
