"""docs/ampere-path-comparison.md's "ours" columns are what our sm_86 encoder really writes.

The QMD table is checked against Bob's launch 0 QMD decoded through the
simulator's open-gpu-doc positions (bobc.sim.qmd_fields, which also checks
each row's bit range), and must have a row for every field the V03_00 recipe
writes and every nonzero field of the QMD; the channel table must list, in
order, the methods the simulator's walker executes for the prologue and ring
entry 0, with their data.
"""
from __future__ import annotations

import re

from bobc.nvidia.encode import RECIPES
from bobc.sim import qmd_fields
from bobc.sim.host_adapter import host_plan
from bobc.sim.invocation import simulate

from .conftest import REPO, built_for

DOC = REPO / "docs" / "ampere-path-comparison.md"


def table(heading: str) -> list[list[str]]:
    text = DOC.read_text(encoding="utf-8")
    section = text.split(heading, 1)[1].split("\n## ", 1)[0]
    rows, started = [], False
    for line in section.splitlines():
        if not line.startswith("|"):
            if started:
                break          # the first table of the section only
            continue
        started = True
        if not line.startswith("|---"):
            rows.append([c.strip() for c in re.split(r"(?<!\\)\|", line.strip())[1:-1]])
    return rows[1:]      # without the header row


def recipe_fields() -> set[str]:
    recipe = RECIPES["V03_00"]
    names = set(recipe.constants) | {"SASS_VERSION", recipe.registers, recipe.shared_memory_size,
                                     recipe.cb0_size_shifted4, recipe.barrier_count}
    for group in (recipe.grid, recipe.block, recipe.program_address, recipe.prefetch, recipe.cb0_address,
                  recipe.sm_config, *recipe.dependents):
        names |= set(group)
    return names


def test_every_qmd_row_states_our_real_value_and_the_documented_bits():
    built, _ = built_for("sm_86")
    raw = built.images.qmd[:256]
    rows = table("## QMD V03_00, every field we write")
    assert rows, "the QMD table is empty"
    documented = {}
    for field, bits, ours, *_ in rows:
        high, low = (int(x) for x in bits.split(":"))
        assert qmd_fields.position("V03_00", field) == (high, low), field
        assert qmd_fields.read(raw, "V03_00", field) == int(ours, 16), field
        documented[field] = int(ours, 16)
    missing = recipe_fields() - set(documented)
    assert not missing, f"fields our recipe writes with no row: {sorted(missing)}"
    nonzero = {name for name in qmd_fields.all_fields("V03_00") if qmd_fields.read(raw, "V03_00", name)}
    assert nonzero <= set(documented), f"nonzero fields with no row: {sorted(nonzero - set(documented))}"


def test_the_channel_table_is_the_method_sequence_our_images_execute(case):
    record = case[0]
    built, target = built_for("sm_86")
    out = simulate(host_plan(built.plan, built.images, target, built.program.search_path), built.images, "predict", record, None,
                   check_hazards=False)
    executed = [(name, data) for at, name, data in out.channel.log.methods
                if at.startswith(("GPFIFO entry -1", "GPFIFO entry 0,"))]
    documented = [(method, int(ours, 16)) for _, method, ours, *_ in table("## Channel set-up and one submission")
                  if method != "(none)"]
    assert documented == executed
