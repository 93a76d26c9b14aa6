"""README.md's "Layout" table names every folder of bobc's package, the examples, the tools and
the tests (probe s41 docs10 finding 4).

It named neither compiler/bobc/native/ (native physical programs: the interpreter's build, the
writer, the decoders) nor compiler/bobc/commands/, nor examples/linear_regression/ (the model
docs/writing-a-plan.md walks through) nor tools/tensor_map/, and its tests/ row left out native,
nvidia and the three models' folders: a reader looking for where a concern lives was not told.
The folders are listed from the checkout itself; the table's paths (and the tests/ row's words)
are read from the page."""
from __future__ import annotations

import re
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
README = (REPO / "README.md").read_text(encoding="utf-8")


def layout_rows() -> list[tuple[str, str]]:
    section = README.split("\n## Layout\n", 1)[1].split("\n## ", 1)[0]
    rows = []
    for line in section.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if line.startswith("|") and len(cells) == 2 and cells[0] not in ("path", "---"):
            rows.append((cells[0], cells[1]))
    return rows


def folders(parent: str) -> set[str]:
    return {p.name for p in (REPO / parent).iterdir()
            if p.is_dir() and not p.name.startswith(("_", "."))}   # not __pycache__, _share (a build's), .hypothesis


def listed_paths() -> set[str]:
    return {path.strip().rstrip("/") for cell, _ in layout_rows() for path in cell.split(",")}


def test_every_layout_path_is_there():
    for path in listed_paths():
        assert (REPO / path).exists(), f"README's Layout names {path}, which is not in the checkout"


def test_every_package_example_and_tool_folder_has_a_row():
    paths = listed_paths()
    for parent in ("compiler/bobc", "examples", "tools"):
        missing = sorted(f"{parent}/{name}/" for name in folders(parent) if f"{parent}/{name}" not in paths)
        assert not missing, f"README's Layout has no row for {missing}"


def test_the_tests_row_names_every_test_folder():
    said = dict(layout_rows())["tests/"]
    words = set(re.findall(r"[a-z_]+", said))
    missing = sorted(folders("tests") - words)
    assert not missing, f"README's Layout row for tests/ does not name {missing}"
