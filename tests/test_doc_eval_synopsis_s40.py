"""docs/language.md's `bobc eval PLAN NAME [...]` synopsis names every option `bobc eval` takes.

It left out `--max-evaluation-steps N`, which eval takes (docs/limits.md's evaluation-step row
lists eval among the commands that do; cli.py gives it to every command that evaluates plans):
a user evaluating a definition that needs more than 32 M steps found no way to say so on the
page that describes eval (probe s40 docs9, left).  The expected set comes from eval's parser, the
listed one from the page."""
from __future__ import annotations

import re
from pathlib import Path

from bobc.cli import build_parser

REPO = Path(__file__).resolve().parents[1]


def _eval_options() -> set[str]:
    parser = build_parser("eval")
    sub = next(action for action in parser._actions if action.__class__.__name__ == "_SubParsersAction")
    actions = {id(a): a for a in sub.choices["eval"]._option_string_actions.values()}.values()
    return {a.option_strings[0] for a in actions if a.option_strings[0] not in ("-h", "--help")}


def test_the_eval_synopsis_lists_every_option_eval_takes():
    doc = (REPO / "docs" / "language.md").read_text(encoding="utf-8")
    synopsis = re.search(r"`bobc eval PLAN NAME ((?:\[[^\]]*\] ?)*)`", doc)
    assert synopsis, "docs/language.md: the `bobc eval PLAN NAME [...]` synopsis"
    assert set(re.findall(r"\[(-I|--[a-z-]+)", synopsis.group(1))) == _eval_options()
