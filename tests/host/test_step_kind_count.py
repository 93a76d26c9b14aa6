"""The number of step kinds the docs give is the number a plan writes (probe s28 docs finding 7):
README and docs/platform.md said 28, the count of bobc.plan.host.STEP_KINDS, whose 28th row is
bobc's own scalar_fill; PlanHost.bob has 27 step constructors (and NvidiaPlanHostStepsEnd)."""
from __future__ import annotations

import re
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def written_kinds() -> list[str]:
    from bobc.language import load_program
    from bobc.targets import SM86

    program = load_program(REPO / "specs/Platform/Linux/Nvidia/PlanHost.bob", target=SM86)
    family = program.scopes["Platform.Linux.Nvidia.PlanHost"].families["NvidiaPlanHostSteps"]
    items = family.constructors.values() if isinstance(family.constructors, dict) else family.constructors
    return [c.name for c in items if c.name != "NvidiaPlanHostStepsEnd"]


def test_the_docs_count_the_kinds_a_plan_writes():
    from bobc.plan.host import STEP_KINDS

    written = written_kinds()
    internal = [k.name for k in STEP_KINDS if k.constructor is None]
    assert internal == ["scalar_fill"] and len(STEP_KINDS) == len(written) + 1
    readme = " ".join((REPO / "README.md").read_text().split())
    platform = " ".join((REPO / "docs/platform.md").read_text().split())
    steps = " ".join((REPO / "docs/host-steps.md").read_text().split())
    counts = [int(n) for text in (readme, platform, steps) for n in re.findall(r"\b(\d+) step kinds\b", text)]
    assert counts and set(counts) == {len(written)}, counts
    assert f"Each of the {len(written)} step kinds of Platform.Linux.Nvidia.PlanHost" in readme
    assert f"the {len(written)} step kinds a plan writes" in platform
    assert f"A plan writes {len(written)} kinds" in steps and "scalar_fill" in steps


def test_the_kinds_table_of_host_steps_md_names_every_kind_a_plan_writes():
    """Each constructor NvidiaPlanHostStepX is a row (or one of a row's names) of the table."""
    text = (REPO / "docs/host-steps.md").read_text()
    table = text[text.index("| kind | fields | meaning |"):]
    names = {name.strip() for row in re.findall(r"^\| ([A-Za-z, ]+) \|", table, re.M) for name in row.split(",")}
    assert {c.removeprefix("NvidiaPlanHostStep") for c in written_kinds()} <= names
