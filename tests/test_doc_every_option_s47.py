"""Every option `bobc SUB --help` offers is documented (probe s47 docsaudit findings 1 and 2).

tests/test_doc_commands_s37.py holds the documents to the parsers one way: an option a document
writes after `bobc SUB` is one `bobc SUB --help` lists.  This is the other way: an option a
subcommand's parser has is named by the documents, so a user reading README's command table, the
docs/ pages or the assembler's README (compiler/bobc/sass/README.md, which documents `bobc asm`)
finds it.  `bobc dump --nonzero` and `--no-code` and `bobc asm --register-budget` were in --help
only.

The oracle is the parser itself (bobc.cli.build_parser): each action of each subcommand, less
--help and the options argparse hides (help=SUPPRESS: `bobc asm --target`, kept only to say "use
--arch"); an option is documented when one of its spellings (`-o` or `--output`) appears in the
documents as an option word.  An option only one subcommand has must also be named where that
subcommand is: in a `bobc SUB ...` command the documents write, in README's command-table row of
that subcommand, or on the subcommand's own page (PAGES: the assembler's README for asm,
docs/simulator.md for sim, docs/cache.md for cache).
"""
from __future__ import annotations

import argparse
import re
from pathlib import Path

from bobc.cli import build_parser

REPO = Path(__file__).resolve().parents[1]
SASS_README = REPO / "compiler/bobc/sass/README.md"
DOCS = [REPO / "README.md", SASS_README, *sorted((REPO / "docs").glob("*.md"))]
PAGES = {"asm": SASS_README, "sim": REPO / "docs/simulator.md", "cache": REPO / "docs/cache.md"}
WORD = r"(?<![\w-]){}(?![\w-])"


def _options() -> dict[str, list[tuple[str, ...]]]:
    """Subcommand -> the option spellings of each of its documented-to-be actions."""
    parser = build_parser()
    found = {}
    for name, sub in parser.subcommand_parsers.items():
        actions = []
        for action in sub._actions:
            if not action.option_strings or action.help == argparse.SUPPRESS:
                continue
            if isinstance(action, argparse._HelpAction):
                continue
            actions.append(tuple(action.option_strings))
        found[name] = actions
    return found


def _text() -> str:
    return "\n".join(doc.read_text(encoding="utf-8") for doc in DOCS)


def _named(spellings: tuple[str, ...], text: str) -> bool:
    return any(re.search(WORD.format(re.escape(s)), text) for s in spellings)


def _where_the_subcommand_is(sub: str) -> str:
    """The documents' text about `bobc SUB`: each `bobc SUB ...` span or indented command line, each
    README command-table row whose command is `bobc SUB`, and the subcommand's own page (PAGES)."""
    parts = []
    for doc in DOCS:
        text = doc.read_text(encoding="utf-8")
        parts += re.findall(rf"`(?:\./)?bobc {sub}(?![:\w])[^`]*`", text)
        parts += re.findall(rf"^\s{{4,}}(?:\$ )?bobc {sub}(?![:\w]).*$", text, re.M)
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    parts += re.findall(rf"^\| `bobc {sub}(?![:\w]).*$", readme, re.M)
    if sub in PAGES:
        parts.append(PAGES[sub].read_text(encoding="utf-8"))
    return "\n".join(parts)


def test_the_reader_finds_every_subcommands_options():
    options = _options()
    assert {"check", "build", "dump", "asm", "run", "sim"} <= set(options)
    assert ("--nonzero",) in options["dump"] and ("--register-budget",) in options["asm"]
    assert all(("--target",) != spelt for spelt in options["asm"]), "asm's hidden --target is not offered"


def test_every_option_of_every_subcommand_is_documented_s47():
    text = _text()
    missing = [f"bobc {sub} {'/'.join(spelt)}" for sub, actions in _options().items()
               for spelt in actions if not _named(spelt, text)]
    assert not missing, ("options `bobc SUB --help` offers that no document names "
                         f"(README.md, docs/*.md, compiler/bobc/sass/README.md): {missing}")


def test_an_option_of_one_subcommand_is_documented_with_it_s47():
    options = _options()
    counts: dict[str, int] = {}
    for actions in options.values():
        for spelt in actions:
            for s in spelt:
                counts[s] = counts.get(s, 0) + 1
    missing = []
    for sub, actions in options.items():
        about = _where_the_subcommand_is(sub)
        for spelt in actions:
            if all(counts[s] == 1 for s in spelt) and not _named(spelt, about):
                missing.append(f"bobc {sub} {'/'.join(spelt)}")
    assert not missing, ("options only one subcommand has that no document names with that subcommand "
                         f"(a `bobc SUB ...` command, README's row of it, its own page): {missing}")


def _dump(*args: str) -> list[str]:
    import os
    import subprocess
    import sys
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO / "compiler"), *filter(None, [os.environ.get("PYTHONPATH")])])}
    done = subprocess.run([sys.executable, "-m", "bobc", "dump", str(REPO / "tests/golden/bob-sm_90"), *args],
                          capture_output=True, text=True, env=env, timeout=300)
    assert done.returncode == 0, done.stderr
    return done.stdout.splitlines()


def test_dump_nonzero_and_no_code_do_what_readme_says_s47():
    """README's `bobc dump` row: `--nonzero` keeps only the QMD fields that are not zero, bank 0
    words are listed only when not zero with or without it, `--no-code` leaves out the regions'
    instructions and nothing else.  Zero is read off each line's value, not from the code."""
    import re as _re

    def key(line):
        return line.split(" = ", 1)[0]

    def zero(line):
        return _re.fullmatch(r"0x0|0", line.split(" = ", 1)[1].split("  #", 1)[0].strip()) is not None

    whole, no_code = _dump(), _dump("--no-code")
    nonzero = _dump("--nonzero", "--no-code")       # the instructions' text costs nvdisasm runs
    qmd = [line for line in whole if ".qmd." in key(line)]
    assert any(zero(line) for line in qmd), "Bob's QMDs have zero fields"
    assert not [line for line in whole + nonzero if ".bank0[" in key(line) and zero(line)]
    assert [line for line in no_code if not (".qmd." in key(line) and zero(line))] == nonzero
    code = _re.compile(r"region\[\d+\]\.code\[")
    assert any(code.match(line) for line in whole)
    assert [line for line in whole if not code.match(line)] == no_code
