"""A comment that swallows code is reported as a warning (bobc check), not an error.

Seed 003 reached us on one line: its first `--` comment runs to the end of
the file, so its 19 definitions are silently comment.  The warning points at
the first swallowed declaration (file:line:column) and counts the rest.
"""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from bobc.language.comments import swallowed_code_warnings, swallowed_declarations
from bobc.language.parse import parse_file

from .conftest import REPOSITORY

SEED_003 = REPOSITORY / "tests/data/shared/seeds/003_76d6a25338f97009.txt"


def one_line_seed(tmp_path) -> Path:
    plan = tmp_path / "PartitionedRegression/Build/CoordinateDevice.bob"
    plan.parent.mkdir(parents=True)
    plan.write_bytes(SEED_003.read_bytes())
    return plan


def test_the_one_line_seed_003_is_warned_at_its_first_definition(tmp_path):
    plan = one_line_seed(tmp_path)
    text = SEED_003.read_text(encoding="utf-8")
    warnings = swallowed_code_warnings(parse_file(plan))
    assert len(warnings) == 1
    warning = warnings[0]
    # the first definition follows the first comment; columns are 1-based
    assert (warning.span.line, warning.span.column) == (1, text.index("def cdNumerics") + 1)
    rendered = warning.render()
    assert rendered.startswith(f"{plan}:1:{text.index('def cdNumerics') + 1}: warning: ")
    assert "`def cdNumerics :`" in rendered and "and 18 more declarations" in rendered


def test_bobc_check_shows_the_warning_before_the_load_error(tmp_path):
    plan = one_line_seed(tmp_path)
    result = subprocess.run([sys.executable, "-m", "bobc", "check", str(plan)],
                            capture_output=True, text=True)
    column = SEED_003.read_text(encoding="utf-8").index("def cdNumerics") + 1
    assert f"{plan}:1:{column}: warning: this comment swallows code" in result.stderr
    assert "Traceback" not in result.stderr


def test_a_warning_is_not_an_error(tmp_path):
    plan = tmp_path / "Swallow.bob"
    plan.write_text("module Swallow\n\ndef kept : Nat = 1 -- then def lost : Nat = 2\n",
                    encoding="utf-8")
    result = subprocess.run([sys.executable, "-m", "bobc", "check", str(plan)],
                            capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    column = "def kept : Nat = 1 -- then def lost".index("def lost") + 1
    assert column == 28
    assert f"{plan}:3:{column}: warning: this comment swallows code: `def lost :`" in result.stderr
    assert "well typed" in result.stdout


@pytest.mark.parametrize("comment, swallowed", [
    ("-- x def name : Nat = 1", "def name :"),
    ("-- x import Std.Natural", "import Std.Natural"),
    ("-- family Thing : Type 0", "family Thing : Type"),
    ("-- constructor ThingValue field unrestricted a : Nat", "constructor ThingValue field"),
    ("-- field unrestricted thingA : Nat", "field unrestricted thingA :"),
    ("-- end-family", "end-family"),
])
def test_each_declaration_form_is_recognized(comment, swallowed):
    [(line, column, found, count)] = swallowed_declarations(f"def a : Nat = 1 {comment}")
    assert (line, found) == (1, swallowed)
    assert column == len("def a : Nat = 1 ") + comment.index(swallowed.split()[0]) + 1


@pytest.mark.parametrize("text", [
    "-- A scalar prediction field is a product; choosing the gradient",
    "-- field here would multiply by the input twice",
    "-- (constructor NvidiaPlanHostSteps NvidiaPlanHostStepSubmit gpPut stride tail)",
    "-- (Coppelius.Build.DirectArtifact passes them), the family of plans",
    "-- we import data; def is a keyword",
    'def s : Bytes = b"-- def x : Nat = 1"',
])
def test_prose_and_strings_are_not_declarations(text):
    assert swallowed_declarations(text) == []


def test_no_module_of_the_repository_swallows_code():
    paths = [*REPOSITORY.glob("specs/**/*.bob"), *REPOSITORY.glob("examples/**/*.bob")]
    assert len(paths) > 30
    for path in paths:
        assert swallowed_code_warnings(parse_file(path)) == [], path
