"""A keyword is never a name (docs/language.md), also where it begins a line after an unfinished
declaration (probe s33 fuzzplan finding 2): `def a : Nat =` followed by the next `def` is refused
at the `=` as a definition without a value, not read as a value `def` and refused at the next
name with "to apply def"; `module A.B.` followed by `import` is a path ending in '.', not the
path A.B.import."""
from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from bobc.language import load_program
from bobc.targets import SM86
from bobc.language.parse import ParseError, parse_module

REPOSITORY = Path(__file__).resolve().parents[2]


def _refusal(text: str) -> ParseError:
    with pytest.raises(ParseError) as caught:
        parse_module(text, "M.bob")
    return caught.value


@pytest.mark.parametrize("following", ["def b : Nat = 1\n",
                                       "family F : Type 0\nconstructor FOne\nend-family\n"])
def test_a_definition_without_a_value_is_refused_at_its_equals_sign(following):
    error = _refusal("module M\n\ndef a : Nat =\n" + following)
    assert (error.span.line, error.span.column) == (3, 13)          # the '=' of `def a : Nat =`
    assert error.message.startswith("the definition a has no value")
    keyword = following.split()[0]
    assert f"'{keyword}' at 4:1" in error.message
    assert "to apply" not in (error.hint or "")


def test_comments_between_the_equals_sign_and_the_next_declaration_are_skipped():
    error = _refusal("module M\ndef a : Nat = -- to do\n  -- later\n\ndef b : Nat = 1\n")
    assert (error.span.line, error.span.column) == (2, 13)
    assert error.message.startswith("the definition a has no value")


def test_a_definition_without_a_type_after_its_colon():
    error = _refusal("module M\ndef a :\ndef b : Nat = 1\n")
    assert (error.span.line, error.span.column) == (2, 7)
    assert error.message.startswith("the definition a has no type")


def test_a_field_without_a_type_is_named_as_the_field():
    error = _refusal("module M\nfamily F : Type 0\nconstructor A\nfield unrestricted x :\nend-family\n")
    assert (error.span.line, error.span.column) == (4, 22)
    assert error.message.startswith("the field x has no type")


def test_a_module_path_ending_in_a_dot_does_not_swallow_the_import():
    error = _refusal("module M.\nimport X\n")
    assert (error.span.line, error.span.column) == (1, 9)
    assert error.message.startswith("a module path does not end with '.'")
    assert "'import' at 2:1" in error.message


@pytest.mark.parametrize("keyword", ["def", "import", "module"])
def test_a_keyword_is_not_a_name_even_where_only_a_name_may_stand(keyword):
    # a module path's part, after its '.' on the same line
    error = _refusal(f"module M.{keyword}\n")
    assert error.message.startswith(f"'{keyword}' is a keyword, not a name")
    assert (error.span.line, error.span.column) == (1, 10)


def test_a_keyword_as_a_definitions_value_is_refused_as_a_keyword():
    error = _refusal("module M\ndef a : Nat = def\n")
    assert error.message.startswith("'def' is a keyword, not a name")
    assert (error.span.line, error.span.column) == (2, 15)


@pytest.mark.parametrize("keyword", ["import", "module"])
def test_import_and_module_are_refused_as_definition_names(keyword):
    error = _refusal(f"module M\ndef {keyword} : Nat = 1\n")
    assert error.message.startswith(f"'{keyword}' is a keyword of the language")


def test_names_that_begin_with_a_keyword_stay_names():
    text = ("module M\ndef define : Nat = 1\ndef Types : Nat = define\ndef in-out : Nat = Types\n"
            "def family-size : Nat = in-out\ndef imports : Nat = family-size\n"
            "def end-familyx : Nat = imports\ndef modules' : Nat = end-familyx\n")
    module = parse_module(text, "M.bob")
    assert [d.name for d in module.declarations] == [
        "define", "Types", "in-out", "family-size", "imports", "end-familyx", "modules'"]


def test_the_next_declarations_keyword_after_a_finished_one_keeps_the_parsers_expectation():
    # a keyword met before the parser reduces what it holds: the expected words are what may
    # follow a finished definition, not every token that may follow a natural somewhere
    error = _refusal("module M\ndef a : Nat = 1\nmodule X\n")
    assert error.message == "unexpected 'module': expected one of 'def', 'family' or the end of the file"


def test_a_linreg_module_line_ending_in_a_dot(tmp_path):
    plan = tmp_path / "lr"
    shutil.copytree(REPOSITORY / "examples/linear_regression", plan)
    model = plan / "LinReg/Model.bob"
    text = model.read_text(encoding="utf-8")
    assert "module LinReg.Model\n" in text
    model.write_text(text.replace("module LinReg.Model\n", "module LinReg.Model.\n", 1), encoding="utf-8")
    with pytest.raises(ParseError) as caught:
        load_program(plan / "LinReg/Build/NativeHost.bob", target=SM86)
    error = caught.value
    assert Path(error.span.path).name == "Model.bob"
    assert (error.span.line, error.span.column) == (1, len("module LinReg.Model.") )
    assert error.message.startswith("a module path does not end with '.'")
