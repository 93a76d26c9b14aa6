"""Every bobc command line the documents write names a subcommand bobc has, and every option
written after it is one that subcommand's --help lists (probe s37 docs4 finding 2:
docs/kernel-contracts.md named `bobc decode`, which does not exist; the argument names it meant
are `bobc dump -I`'s and `bobc diff -I`'s).

Read: each `` `bobc SUB ...` `` span of README.md, docs/*.md and compiler/bobc/sass/README.md,
and each indented command line starting `bobc SUB` (with its `\\` continuation lines, up to a
`#` comment)."""
from __future__ import annotations

import re
from pathlib import Path

from bobc.cli import build_parser

REPO = Path(__file__).resolve().parents[1]
DOCS = [REPO / "README.md", REPO / "compiler/bobc/sass/README.md", *sorted((REPO / "docs").glob("*.md"))]
OPTION = re.compile(r"(?<![\w-])(--[a-z][a-z0-9-]*)")
# `bobc SUB` as a command: SUB a word not followed by ':' (`bobc commit: ...` is --version's output)
SPAN = re.compile(r"`(?:\./)?bobc ([a-z]+)(?![:\w])([^`]*)`")
LINE = re.compile(r"^\s{4,}(?:\$ )?bobc ([a-z]+)(?![:\w])(.*)$")


def options() -> dict[str, set[str]]:
    parser = build_parser()
    return {name: set(OPTION.findall(p.format_help())) for name, p in parser.subcommand_parsers.items()}


def written() -> list[tuple[str, str, str]]:
    """(where, subcommand, the rest of its line) for every bobc command the documents write."""
    found = []
    for doc in DOCS:
        lines = doc.read_text(encoding="utf-8").split("\n")
        for number, line in enumerate(lines, 1):
            where = f"{doc.relative_to(REPO)}:{number}"
            found += [(where, m.group(1), m.group(2)) for m in SPAN.finditer(line)]
            m = LINE.match(line)
            if m:
                rest, following = m.group(2), number
                while rest.rstrip().endswith("\\") and following < len(lines):
                    rest = rest.rstrip()[:-1] + " " + lines[following]
                    following += 1
                found.append((where, m.group(1), rest.split(" #")[0]))
    return found


def test_the_reader_finds_the_commands():
    commands = written()
    assert len(commands) > 100
    assert any(sub == "build" and "--emit-images" in rest for _, sub, rest in commands)


def test_every_documented_command_is_a_subcommand_with_those_options():
    known = options()
    wrong = []
    for where, sub, rest in written():
        if sub not in known:
            wrong.append(f"{where}: bobc {sub}: no such subcommand (bobc has {', '.join(sorted(known))})")
            continue
        wrong += [f"{where}: bobc {sub} {option}: not in `bobc {sub} --help`"
                  for option in OPTION.findall(rest) if option not in known[sub]]
    assert not wrong, "\n".join(wrong)
