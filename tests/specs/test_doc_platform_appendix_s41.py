"""docs/platform.md's appendix, "every platform name the seeds use, by declaring module", is what
the seeds use (probe s41 docs10: the tables say they are generated from the seeds' text by the walk
in tests/specs/test_seed_platform_names.py, but no test held them to it; a platform name renamed
or moved to another module, or a seed using a new one, left the tables behind unnoticed).

Recomputed here by that walk (used_names) and the loaded program's scopes (declaring_modules):
each seed's names that no model module declares, grouped by the module that declares them, must
be the section's rows, module for module and name for name."""
from __future__ import annotations

from collections import defaultdict

import pytest

from .conftest import REPOSITORY
from .test_seed_platform_names import MODEL_MODULES, SEED_003, SEED_004, declaring_modules, load_seed

DOC = (REPOSITORY / "docs" / "platform.md").read_text(encoding="utf-8")


def rows(heading: str) -> dict[str, set[str]]:
    """module -> names of the appendix table under the heading starting `heading`."""
    section = DOC.split(f"\n{heading}", 1)[1].split("\n#", 1)[0]
    table = {}
    for line in section.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")] if line.startswith("|") else []
        if len(cells) == 2 and cells[0] not in ("module", "---"):
            assert cells[0] not in table, f"{heading}: {cells[0]} has two rows"
            table[cells[0]] = {name.strip() for name in cells[1].split(",")}
    return table


@pytest.mark.parametrize("seed,heading", [(SEED_003, "### Seed 003"), (SEED_004, "### Seed 004")],
                         ids=["seed-003", "seed-004"])
def test_the_appendix_lists_each_platform_name_under_its_declaring_module(seed, heading):
    found = declaring_modules(load_seed(seed), seed)
    used = defaultdict(set)
    for name, module in found.items():
        if module not in MODEL_MODULES[seed]:
            used[module].add(name)
    listed = rows(heading)
    assert listed, f"docs/platform.md has no table under {heading!r}"
    differences = {module: {"used, not listed": sorted(used.get(module, set()) - names),
                            "listed, not used there": sorted(names - used.get(module, set()))}
                   for module, names in {**{m: set() for m in used}, **listed}.items()
                   if used.get(module, set()) != names}
    assert not differences, differences
