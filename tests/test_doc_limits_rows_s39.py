"""docs/limits.md lists the bound session 39 gave a native physical program's naturals, with the
value its definition gives (probe s39 docs8 finding 1).

The row (2^64 - 1: each natural is 8 bytes little-endian) was added by bec4d5ba and lost in the
merge b5b9acd0, while docs/platform.md and the refusal's hint still send the reader to
docs/limits.md, "The native physical program", for it."""
from __future__ import annotations

import re
from pathlib import Path


REPO = Path(__file__).resolve().parents[1]
LIMITS = (REPO / "docs" / "limits.md").read_text(encoding="utf-8")


def section_rows(heading: str) -> list[list[str]]:
    """The table rows (cells, stripped) of the limits.md section whose heading starts `heading`."""
    start = LIMITS.index(f"\n## {heading}")
    end = LIMITS.find("\n## ", start + 1)
    rows = []
    for line in LIMITS[start:end if end >= 0 else None].splitlines():
        if line.startswith("| ") and not line.startswith("| limit |"):
            rows.append([cell.strip() for cell in line.strip().strip("|").split(" | ")])
    return rows


def row(heading: str, starts: str) -> list[str]:
    found = [r for r in section_rows(heading) if r[0].startswith(starts)]
    assert len(found) == 1, f"docs/limits.md, {heading!r}: no one row starting {starts!r}"
    return found[0]


def power_text(value: int) -> str:
    """2^k - 1 as the docs write it."""
    assert (value + 1) & value == 0
    return f"2^{(value + 1).bit_length() - 1} - 1"


def test_platform_md_sends_a_program_natural_to_a_row_that_holds_it():
    platform = " ".join((REPO / "docs" / "platform.md").read_text(encoding="utf-8").split())
    assert 'of 2^64 or more is refused by `bobc build` and `bobc run --reference`' in platform
    assert '(docs/limits.md, "The native physical program")' in platform
    limit = row("The native physical program", "every natural a program's bytes carry")
    natural_bytes = 8                       # docs/platform.md: a natural is 8 bytes little-endian
    assert limit[1] == power_text(256 ** natural_bytes - 1)
    assert "`natural_too_wide`" in limit[2]
    from bobc.native import writer
    assert callable(writer.natural_too_wide)

