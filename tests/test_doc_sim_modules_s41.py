"""docs/simulator.md, "What runs, module by module": the table names every module of
compiler/bobc/sim, and the page names every fault kind bobc.sim.faults declares (probe s41 docs11).

After session 41's merges the table lacked arch.py, faults.py and limits.py (a reader looking for
where the per-target facts, the fault kinds or the step limit live was not told), and the page never
named `Hazard` or `SemaphoreNotReleased`, the classes a caller of run_kernel / simulate catches.
The modules are listed from the checkout and the classes from the module itself (every subclass of
SimulationFault, and HostStepFault), not from the page."""
from __future__ import annotations

import inspect
import re
from pathlib import Path

from bobc.sim import faults

REPO = Path(__file__).resolve().parents[1]
PAGE = (REPO / "docs" / "simulator.md").read_text(encoding="utf-8")


def table_modules() -> set[str]:
    section = PAGE.split("\n## What runs, module by module\n", 1)[1].split("\n## ", 1)[0]
    named = set()
    for line in section.splitlines():
        if line.startswith("| `"):
            first = line.strip("|").split("|")[0]
            named |= set(re.findall(r"`([a-z_]+\.py)`", first))
    return named


def test_the_module_table_names_every_module_of_the_simulator():
    modules = {p.name for p in (REPO / "compiler" / "bobc" / "sim").glob("*.py") if p.name != "__init__.py"}
    named = table_modules()
    assert modules - named == set(), f"docs/simulator.md's module table lacks {sorted(modules - named)}"
    assert named - modules == set(), f"docs/simulator.md's module table names {sorted(named - modules)}, not in sim/"


def test_the_page_names_every_fault_kind():
    kinds = {name for name, cls in inspect.getmembers(faults, inspect.isclass)
             if cls.__module__ == faults.__name__ and issubclass(cls, (faults.SimulationFault, faults.HostStepFault))}
    assert {"LanesRace", "WarpsRace", "BlocksRace"} <= kinds
    missing = sorted(k for k in kinds if f"`{k}`" not in PAGE)
    assert not missing, f"docs/simulator.md never names {missing}"
