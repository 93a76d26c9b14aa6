"""docs/limits.md, "The simulator": each row's constant is declared in a file the section names,
with the value the row gives (probe s40 docs9).

The section named compiler/bobc/sim/executor.py alone and docs/simulator.md said
`executor.MAX_STEPS`, while MAX_STEPS is declared in compiler/bobc/sim/limits.py (0e87c5a2 moved it
there so `bobc --help` names it without importing the simulator; executor.py only imports it), and
limits.md says "Each limit is declared once, in the file named in the table".  The values are read
from each file's own module-level assignment (ast), not from the simulator's behaviour."""
from __future__ import annotations

import ast
import re
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
LIMITS = (REPO / "docs" / "limits.md").read_text(encoding="utf-8")
SIMULATOR = (REPO / "docs" / "simulator.md").read_text(encoding="utf-8")


def _section(heading: str) -> str:
    start = LIMITS.index(f"\n## {heading}")
    end = LIMITS.find("\n## ", start + 1)
    return LIMITS[start:end]


def _declared(path: Path) -> dict[str, int]:
    """Module-level NAME = <int expression> assignments of `path`, evaluated."""
    out = {}
    for node in ast.parse(path.read_text(encoding="utf-8")).body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            try:
                out[node.targets[0].id] = eval(compile(ast.Expression(node.value), str(path), "eval"), {})
            except Exception:
                pass
    return out


def _number(text: str) -> int:
    return int(text.replace(",", ""))


def test_each_simulator_row_is_declared_in_a_named_file_with_its_value():
    section = _section("The simulator (")
    heading = section.splitlines()[1]
    files = re.search(r"\((compiler/bobc/sim/[^)]*)\)", heading).group(1).split(", ")
    folder = Path(files[0]).parent
    paths = [REPO / folder / Path(name).name for name in files]
    declared = [_declared(path) for path in paths]
    rows = [line for line in section.splitlines() if line.startswith("| ") and not line.startswith("| limit")
            and not line.startswith("|---")]
    assert len(rows) == 4, rows
    for line in rows:
        value = line.split(" | ")[1]
        number, unit = re.match(r"([\d,]+)( GiB)?", value).groups()
        name = re.search(r"`([A-Z_]+)`", value).group(1)
        where = [path for path, names in zip(paths, declared) if name in names]
        assert len(where) == 1, f"{name} is declared in none, or several, of {files}: {line}"
        assert declared[paths.index(where[0])][name] == _number(number) * (2 ** 30 if unit else 1), line
        if ", limits.py" in value:           # the row names the file when it is not the first one
            assert where[0].name == "limits.py", line


def test_simulator_md_names_the_step_limit_where_it_is_declared():
    said = re.search(r"A launch may issue ([\d,]+) instructions \(`bobc\.sim\.limits\.MAX_STEPS`", SIMULATOR)
    assert said, "docs/simulator.md, \"Step limit\": the step limit's name and place"
    assert _declared(REPO / "compiler/bobc/sim/limits.py")["MAX_STEPS"] == _number(said.group(1))
