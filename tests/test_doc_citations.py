"""Every `docs/NAME.md, "Section"` a document, source or test cites names a place that is there
(probe s28 texts: several citations named headings that did not exist): a heading that starts
with the cited words (its first words), or a named paragraph -- a paragraph or list item whose first words are the
name, then '.', ',', ':' or ' (' (`Page size.`, `- Files (host_io.c; ...`, `**The run's identity.**`)."""
from __future__ import annotations

import re
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
CITATION = re.compile(r'docs/([a-z0-9_-]+\.md),?\s*"([A-Za-z][^"\n]*)"')
SOURCES = ["README.md", "docs/*.md", "compiler/**/*.py", "runtime_c/*.[ch]", "examples/**/*.py", "examples/**/*.md",
           "specs/**/*.bob", "tests/**/*.py", "bench/**/*.py", "bench/**/*.md"]


def places(doc: Path) -> list[tuple[bool, str]]:
    """(is a heading, its text) of every heading and every paragraph or list item's start."""
    text = doc.read_text(encoding="utf-8")
    found = [(True, m.group(1).strip()) for m in re.finditer(r"^#+\s+(.*)$", text, re.M)]
    found += [(False, m.group(1)) for m in re.finditer(r"^(?:[-*]\s+)?(?:\*\*)?([A-Z][^\n]{0,80})", text, re.M)]
    return found


def named(heading: bool, place: str, name: str) -> bool:
    """A heading is cited by its first words; a paragraph by the words its name ends at."""
    if place == name:
        return True
    if not place.startswith(name):
        return False
    rest = place[len(name):]
    return rest.startswith((".", ",", ":", " (", "**")) or (heading and rest.startswith(" "))


def test_every_cited_section_is_there():
    cache: dict[str, list[str]] = {}
    missing = []
    for pattern in SOURCES:
        for path in sorted(REPO.glob(pattern)):
            if ".venv" in path.parts or not path.is_file():
                continue
            for m in CITATION.finditer(path.read_text(encoding="utf-8", errors="replace")):
                doc, name = m.groups()
                target = REPO / "docs" / doc
                if not target.is_file():
                    missing.append(f"{path.relative_to(REPO)}: docs/{doc} does not exist")
                    continue
                found = cache.setdefault(doc, places(target))
                if not any(named(heading, place, name) for heading, place in found):
                    missing.append(f'{path.relative_to(REPO)}: docs/{doc}, "{name}" is no heading or named paragraph')
    assert not missing, "\n".join(missing)
