"""docs/runtime.md's file table names every C source and header of runtime_c/ (probe s41 docs11).

The table listed the driver shim and host_runtime only: launch_rows.c (the GPU fault lines naming
launches, session 41), the plan host's own files (plan_host, plan_fill, plan_commands), host_io,
host_settings, elf_sections, the native host's files and others were missing, so a reader looking
for where a concern of the runtime lives was not told.  The files are listed from the checkout;
the table's names (`NAME.c`, `NAME.h`, `NAME.h/.c`) are read from the page."""
from __future__ import annotations

import re
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
PAGE = (REPO / "docs" / "runtime.md").read_text(encoding="utf-8")


def table_files() -> set[str]:
    rows = PAGE.split("| file | what |", 1)[1].split("\n\n", 1)[0]
    named = set()
    for line in rows.splitlines():
        if not line.startswith("| `"):
            continue
        first = line.strip("|").split("|")[0]
        for stem, kinds in re.findall(r"`([a-z0-9_]+)\.([ch](?:/\.[ch])?)`", first):
            named |= {f"{stem}.{kind.strip('/.')}" for kind in kinds.split("/")}
    return named


def test_the_file_table_names_every_runtime_source():
    sources = {p.name for p in (REPO / "runtime_c").glob("*.[ch]")}
    named = table_files()
    assert not sources - named, f"docs/runtime.md's file table lacks {sorted(sources - named)}"
    assert not {n for n in named if "/" not in n} - sources, \
        f"docs/runtime.md's file table names {sorted(named - sources)}, not in runtime_c/"
