"""The options docs/simulator.md and docs/runtime.md list as `bobc sim`'s and `bobc run
--reference`'s own -- the words that may stand anywhere on the line, never handed to the host's
parser -- are exactly those the commands' parsers keep as their own (probe s40 docs9).

simulator.md's list left out `--max-evaluation-steps`, which `bobc sim PLAN train ...
--max-evaluation-steps N` takes as its own after the host's options (cli.py adds it to every
subcommand that evaluates plans; commands/run.py split_host_words keeps every option of the
parser that is not one of HOST_OPTIONS).  The expected sets come from the parsers; the lists
from the pages."""
from __future__ import annotations

import re
from pathlib import Path

from bobc.cli import build_parser
from bobc.commands.run import HOST_OPTIONS

REPO = Path(__file__).resolve().parents[1]


def _own(command: str) -> set[str]:
    """The parser's own option spellings, less the host's options, --help and a long alias of a
    short option the page gives (-I / --include)."""
    parser = build_parser(command)
    sub = next(action for action in parser._actions if action.__class__.__name__ == "_SubParsersAction")
    options = sub.choices[command]._option_string_actions
    host = {option for option, _ in HOST_OPTIONS}
    own = set()
    for action in {id(a): a for a in options.values()}.values():
        if action.option_strings[0] in ("-h", "--help") or set(action.option_strings) & host:
            continue
        own.add(action.option_strings[0])
    return own


def _listed(text: str) -> set[str]:
    return set(re.findall(r"`(-I|--[a-z-]+)`", text))


def test_sims_own_options_are_the_ones_simulator_md_lists():
    doc = (REPO / "docs" / "simulator.md").read_text(encoding="utf-8")
    said = re.search(r"while sim's own options \(([^)]*)\) may stand\s+anywhere", doc)
    assert said, "docs/simulator.md: the list of sim's own options"
    assert _listed(said.group(1)) == _own("sim")


def test_runs_own_options_are_the_ones_runtime_md_lists():
    doc = (REPO / "docs" / "runtime.md").read_text(encoding="utf-8")
    said = re.search(r"`bobc run --reference` hands every word that is not its own\s+\(([^)]*)\)", doc)
    assert said, "docs/runtime.md: the list of run's own options"
    assert _listed(said.group(1)) == _own("run")
