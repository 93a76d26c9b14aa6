"""Parser conformance: success/<name>A.bob prints as <name>B.txt; failure/<name>.bob
fails with every line of <name>.txt in its message; the seeds parse."""
from __future__ import annotations

import re

import pytest

from bobc.errors import BobcError
from bobc.language.parse import parse_file, parse_module
from bobc.language.syntax import Definition, FamilyDeclaration, show_module

from .conftest import HERE, REPOSITORY, cases, expected_fragments


@pytest.mark.parametrize("path", cases("parser/success", "*A.bob"))
def test_parser_success(path):
    expected = path.with_name(path.name[:-len("A.bob")] + "B.txt").read_text(encoding="utf-8")
    assert show_module(parse_file(path)) == expected


@pytest.mark.parametrize("path", cases("parser/failure", "*.bob"))
def test_parser_failure(path):
    with pytest.raises(BobcError) as caught:
        parse_file(path)
    rendered = caught.value.render()
    for fragment in expected_fragments(path.with_suffix(".txt")):
        assert fragment in rendered


def test_parser_failure_shows_the_line_with_a_caret():
    path = HERE / "parser/failure/missing_dot.bob"
    with pytest.raises(BobcError) as caught:
        parse_file(path)
    lines = caught.value.render().splitlines()
    assert lines[1] == "  def f = (lambda unrestricted x : Nat x)"
    assert lines[2] == "  " + " " * 37 + "^"


def _declaration_names(module, kind):
    return [d.name for d in module.declarations if isinstance(d, kind)]


def test_seed_000_training_run_parses_as_given():
    module = parse_file(REPOSITORY / "examples/bob/Bob/TrainingRun.bob")
    assert module.name == "Bob.TrainingRun"
    assert len(module.imports) == 10
    assert _declaration_names(module, FamilyDeclaration) == [
        "BobCheckpointTransportSchema", "BobTrainingRunSemantics"]
    assert "bobCheckpointContract" in _declaration_names(module, Definition)
    # the canonical print parses back to the same canonical print
    text = show_module(module)
    assert show_module(parse_module(text, "again.bob")) == text


def test_seed_001_physical_components_parses_as_given():
    module = parse_file(REPOSITORY / "examples/bob/Bob/Build/PhysicalComponents.bob")
    assert module.name == "Bob.Build.PhysicalComponents"
    assert len(module.imports) == 25
    names = _declaration_names(module, Definition)
    assert names[0] == "bobGatherMachineBytes" and names[-1] == "bobDeviceHazard"
    assert len(names) == 80
    text = show_module(module)
    assert show_module(parse_module(text, "again.bob")) == text


def test_seed_004_listing_parses_once_line_numbers_are_stripped():
    listing = (HERE / "parser/seeds/004_coppelius_native_host_listing.txt").read_text(encoding="utf-8")
    lines = listing.split("\n")[2:]          # the title line and the blank after it
    source = "\n".join(re.sub(r"^\d+", "", line) for line in lines)
    module = parse_module(source, "Coppelius/Build/NativeHost.bob")
    assert module.name == "Coppelius.Build.NativeHost"
    assert _declaration_names(module, FamilyDeclaration) == [
        "CoppeliusRealizedTables", "CoppeliusHostTarget", "CoppeliusGatherRun"]
    assert "coppeliusHostStepsFresh" in _declaration_names(module, Definition)


def test_spans_point_at_names():
    module = parse_module("module M\n\ndef  answer = 42\n", "M.bob")
    definition = module.declarations[0]
    assert (definition.span.line, definition.span.column) == (3, 6)
    assert (definition.body.span.line, definition.body.span.column) == (3, 15)
