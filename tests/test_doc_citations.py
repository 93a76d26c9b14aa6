"""Every `docs/NAME.md, "Section"` a document, source or test cites names a place that is there
(probe s28 texts: several citations named headings that did not exist): a heading that starts
with the cited words (its first words), or a named paragraph -- a paragraph or list item whose first words are the
name, then '.', ',', ':' or ' (' (`Page size.`, `- Files (host_io.c; ...`, `**The run's identity.**`).

A citation is also read where a Python or C string writes its quotes escaped (`docs/NAME.md, \\"Section\\"`)
and where a bobc message cites the document through bobc.resources.doc, which names the installed
copy when bobc is not run from its checkout (`{doc('NAME.md')}, \\"Section\\"`; probe s30 packaging
finding 5)."""
from __future__ import annotations

import re
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
CITATION = re.compile(r"""(?:docs/|\bdoc\(['"])([a-z0-9_-]+\.md)(?:['"](?:,[^)]*)?\)\}?)?,?\s*"""
                      r"""(?:"([A-Za-z][^"\n]*)"|\\"([A-Za-z][^"\\\n]*)\\")""")
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
                doc, name = m.group(1), m.group(2) or m.group(3)
                target = REPO / "docs" / doc
                if not target.is_file():
                    missing.append(f"{path.relative_to(REPO)}: docs/{doc} does not exist")
                    continue
                found = cache.setdefault(doc, places(target))
                if not any(named(heading, place, name) for heading, place in found):
                    missing.append(f'{path.relative_to(REPO)}: docs/{doc}, "{name}" is no heading or named paragraph')
    assert not missing, "\n".join(missing)


def test_a_citation_is_read_in_each_way_it_is_written():
    """The pattern sees the plain, the escaped and the doc() forms (a form it cannot read is a
    citation this file never checks)."""
    written = ['docs/limits.md, "The simulator"', 'docs/native-host.md "Settings"',
               'docs/host-steps.md, \\"Reference kernels\\"',
               'f"({doc(\'host-steps.md\')}, \\"Reference kernels\\")"',
               "hint=f\"{doc('simulator.md')}, \\\"Step limit\\\"\"",
               "help=f\"{doc('simulator.md', in_help=True)}, \\\"Launch order\\\"\""]
    found = [(m.group(1), m.group(2) or m.group(3)) for text in written for m in CITATION.finditer(text)]
    assert found == [("limits.md", "The simulator"), ("native-host.md", "Settings"),
                     ("host-steps.md", "Reference kernels"), ("host-steps.md", "Reference kernels"),
                     ("simulator.md", "Step limit"), ("simulator.md", "Launch order")]
