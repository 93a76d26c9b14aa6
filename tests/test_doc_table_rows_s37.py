"""Every Markdown table row of the docs ends at its last cell (probe s37 docs5).

compiler/bobc/sass/README.md's table of sm_90's control codes had the next paragraph's first
words after its last row's closing `|`: GitHub's Markdown drops a cell past the header's count,
and the paragraph's following lines became one-cell rows, so the sentence naming
tests/sass/test_schedule.py's independent hazard checker was not shown as text.  A row is a line
starting with `|`; it must end with `|`, and have the header row's number of cells (an unescaped
`|` splits a cell, inside a code span too).
"""
from __future__ import annotations

import re
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
DOCS = sorted([REPO / "README.md", REPO / "compiler" / "bobc" / "sass" / "README.md", REPO / "bench" / "README.md",
               *(REPO / "docs").glob("*.md")])


@pytest.mark.parametrize("path", DOCS, ids=lambda p: str(p.relative_to(REPO)))
def test_table_rows_end_at_their_last_cell(path):
    bad = []
    header = None
    for number, line in enumerate(path.read_text().splitlines(), 1):
        if not line.startswith("|"):
            header = None
            continue
        cells = len(re.findall(r"(?<!\\)\|", line.rstrip()))
        if not line.rstrip().endswith("|"):
            bad.append(f"{path.name}:{number}: text after the row's last '|': {line[:100]!r}")
        elif header is None:
            header = cells
        elif cells != header:
            bad.append(f"{path.name}:{number}: {cells - 1} cells, the header has {header - 1}")
    assert not bad, "\n".join(bad)
