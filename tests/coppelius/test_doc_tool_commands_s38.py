"""Every `python -m coppelius_host.TOOL ...` / `python -m coppelius_model.TOOL ...` command the documents
write is one its tool's argument parser accepts (probe s38 docs7 finding 3: docs/coppelius.md's
`python -m coppelius_host.checkpoint fresh --config 2x384x128` left out the required -o, a usage
error as written).  A synopsis (a span with `[`, `|` or `...`) is not a command line and is skipped.

Each command is parsed by the tool's own main() with argparse's parse_args stopped right after it
accepted the line: nothing is built or written."""
from __future__ import annotations

import argparse
import importlib
import re
import shlex

import pytest

from .conftest import REPOSITORY

DOCS = [REPOSITORY / "README.md", *sorted((REPOSITORY / "docs").glob("*.md"))]
SPAN = re.compile(r"`(?:cd examples/coppelius && )?python -m (coppelius_(?:host|model)\.[a-z_]+)([^`]*)`")
SHAPE_RULE = re.compile(r"a width of (\d+) is refused for (?:its|the width's) (\w+) rules")
NUMBERS = {"one": 1, "two": 2, "three": 3, "four": 4}


def commands() -> list[tuple[str, str, list[str]]]:
    found = []
    for path in DOCS:
        text = " ".join(path.read_text(encoding="utf-8").split())
        for module, rest in SPAN.findall(text):
            if any(mark in rest for mark in ("[", "|", "...")):
                continue
            found.append((path.name, module, shlex.split(rest)))
    return found


class Accepted(Exception):
    pass


def test_the_reader_finds_the_commands():
    modules = {module for _, module, _ in commands()}
    assert {"coppelius_host.checkpoint", "coppelius_host.build"} <= modules, modules


@pytest.mark.parametrize("where,module,argv", commands(), ids=lambda v: v if isinstance(v, str) else " ".join(v))
def test_a_documented_command_is_accepted_by_its_tool(monkeypatch, where, module, argv):
    original = argparse.ArgumentParser.parse_args

    def parse_then_stop(self, args=None, namespace=None):
        original(self, args, namespace)
        raise Accepted

    monkeypatch.setattr(argparse.ArgumentParser, "parse_args", parse_then_stop)
    tool = importlib.import_module(module)
    try:
        tool.main(argv)
    except Accepted:
        return
    except SystemExit as stop:
        pytest.fail(f"{where}: `python -m {module} {' '.join(argv)}` is refused by its parser (exit {stop.code})")
    pytest.fail(f"{where}: `python -m {module} {' '.join(argv)}` never parsed its arguments")


def test_the_width_the_shapes_paragraph_names_breaks_that_many_rules():
    """docs/coppelius.md: "a width of 160 is refused for the width's two rules" (it said three: the
    third, the chunk's, is a rule of a 1-layer shape's payload, not of the width)."""
    from coppelius_model import config
    text = " ".join((REPOSITORY / "docs" / "coppelius.md").read_text(encoding="utf-8").split())
    match = SHAPE_RULE.search(text)
    assert match, "docs/coppelius.md names the width a shape's rules refuse"
    width, count = int(match.group(1)), NUMBERS[match.group(2)]
    for layers, context in ((1, 128), (2, 128), (4, 256)):
        said = config.shape_refusal(layers, width, context, config.DEFAULT_CHUNK_BYTES)
        widths = [rule for rule in said.split("; ") if rule.startswith("width ")]
        assert len(widths) == count, (layers, context, said)
