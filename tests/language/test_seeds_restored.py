"""Seeds 003 and 004 sit in examples/ as given, restored by a whitespace-only change.

- 004 (Coppelius.Build.NativeHost) came as a listing: a title line, a blank
  line, then every line prefixed by its number.  examples/coppelius holds it
  with only the numbers and the title stripped: putting them back gives the
  seed byte for byte.
- 003 (PartitionedRegression.Build.CoordinateDevice) came with its newlines
  lost, so its first `--` comment swallows the rest of the file.
  examples/partitioned_regression holds it with the newlines restored: the
  two texts have the same words in the same order (only whitespace differs),
  and the restored module parses with every import and definition the
  one-line text spells, while the one-line text parses as imports alone.

The seeds are vendored in tests/data/shared/seeds (a clone has no ../shared); their
tests/data/PROVENANCE records where they came from and their sha256
(tests/test_vendored_data.py checks them, and against ../shared where it exists).
"""
from __future__ import annotations

import hashlib
import re

import pytest

from bobc.language.parse import parse_file
from bobc.language.syntax import Definition

from .conftest import REPOSITORY

SEEDS = REPOSITORY / "tests/data/shared/seeds"
SEED_003 = SEEDS / "003_76d6a25338f97009.txt"
SEED_004 = SEEDS / "004_9aef507ca6eed15f.txt"
COORDINATE_DEVICE = REPOSITORY / "examples/partitioned_regression/PartitionedRegression/Build/CoordinateDevice.bob"
NATIVE_HOST = REPOSITORY / "examples/coppelius/Coppelius/Build/NativeHost.bob"


def test_004_is_the_listing_without_numbers_and_title():
    seed = SEED_004.read_text(encoding="utf-8")
    restored = NATIVE_HOST.read_text(encoding="utf-8")
    lines = restored.split("\n")
    # put back what was stripped: the title, its blank line, each line's number
    rebuilt = "\n".join(["Coppelius.Build.NativeHost", ""]
                        + [f"{number}{line}" for number, line in enumerate(lines, 1)])
    assert rebuilt == seed
    assert lines[0] == "module Coppelius.Build.NativeHost"
    assert len(lines) == 677


def test_004_differs_from_the_listing_only_by_numbers():
    seed_lines = SEED_004.read_text(encoding="utf-8").split("\n")[2:]
    restored_lines = NATIVE_HOST.read_text(encoding="utf-8").split("\n")
    for number, (given, ours) in enumerate(zip(seed_lines, restored_lines, strict=True), 1):
        prefix = re.match(r"\d+", given).group(0)
        assert int(prefix) == number and given[len(prefix):] == ours


def test_003_restoration_changes_whitespace_alone():
    seed = SEED_003.read_text(encoding="utf-8")
    restored = COORDINATE_DEVICE.read_text(encoding="utf-8")
    assert "\n" not in seed
    assert restored.split() == seed.split()
    # nothing but newlines was added: every run of whitespace in the restored
    # text is one space where the seed has one space
    assert re.sub(r"\s+", " ", restored).strip() == seed.strip()
    assert restored.count("\n") > 60


def test_003_restored_parses_with_every_declaration():
    seed = SEED_003.read_text(encoding="utf-8")
    spelled_imports = re.findall(r"\bimport ([A-Z][\w.]*)", seed)
    spelled_definitions = re.findall(r"\bdef (\w+) [:=]", seed)
    assert len(spelled_imports) == 39 and len(spelled_definitions) == 19
    restored = parse_file(COORDINATE_DEVICE)
    assert restored.name == "PartitionedRegression.Build.CoordinateDevice"
    assert [i.module for i in restored.imports] == spelled_imports
    assert [d.name for d in restored.declarations if isinstance(d, Definition)] == spelled_definitions
    assert len(restored.declarations) == 19


def test_the_one_line_003_swallows_its_definitions(tmp_path):
    # the seed as given: the first comment runs to the end of the only line
    plan = tmp_path / "PartitionedRegression/Build/CoordinateDevice.bob"
    plan.parent.mkdir(parents=True)
    plan.write_bytes(SEED_003.read_bytes())
    swallowed = parse_file(plan)
    assert len(swallowed.imports) == 39
    assert swallowed.declarations == []


@pytest.mark.parametrize("path", [COORDINATE_DEVICE, NATIVE_HOST])
def test_restored_seeds_parse(path):
    module = parse_file(path)
    assert module.declarations
