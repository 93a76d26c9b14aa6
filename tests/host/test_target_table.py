"""The host's per-target C row (runtime_c/nv_targets.c) is bobc.targets' rendering,
and the class names runtime_c/nv_classes.h defines carry the IDs bobc.targets gives them."""
from __future__ import annotations

import re
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def test_committed_row_is_the_tables_rendering():
    from bobc.host.targets_c import render

    assert (REPO / "runtime_c/nv_targets.c").read_text(encoding="utf-8") == render(), (
        "runtime_c/nv_targets.c is stale: python -m bobc.host.targets_c > runtime_c/nv_targets.c")


def test_class_names_agree_with_the_headers_defines():
    from bobc.targets import CLASS_NAMES, TARGETS

    defines = {name: int(value, 16) for name, value in re.findall(
        r"^#define\s+([A-Z0-9_]+)\s+0x([0-9A-Fa-f]+)u?\b", (REPO / "runtime_c/nv_classes.h").read_text(), re.M)}
    for class_id, name in CLASS_NAMES.items():
        assert defines.get(name) == class_id, name
    for target in TARGETS.values():
        for field in ("compute_class", "gpfifo_class", "copy_class", "usermode_class"):
            assert getattr(target, field) in CLASS_NAMES, (target.name, field)


# ---- one table: every per-target fact is read from bobc.targets, never restated
import dataclasses  # noqa: E402

# the simulator keeps its own QMD and descriptor tables on purpose (independent of the
# encoders: tests/sim/test_qmd_fields.py holds the two together); the learned SASS tables
# hold instruction examples
RESTATED_ELSEWHERE_ALLOWED = ("compiler/bobc/sim/", "compiler/bobc/sass/tables/sm_")
FACTS = [r"\b0x160\b", r"\b0x210\b", r"\b0x118\b", r"\b0x208\b", r"0x[cC]7[cC]0\b", r"0x[cC][bB][cC]0\b",
         r"0x[cC]56[fF]\b", r"0x[cC]86[fF]\b", r"0x[cC]7[bB]5\b", r"0x[cC]8[bB]5\b", r"0x[cC]461\b", r"0x[cC]661\b"]


def test_per_target_facts_are_declared_once():
    found = []
    for path in sorted((REPO / "compiler/bobc").rglob("*.py")):
        where = str(path.relative_to(REPO))
        if where == "compiler/bobc/targets.py" or where.startswith(RESTATED_ELSEWHERE_ALLOWED):
            continue
        code = "\n".join(line.split("#", 1)[0] for line in path.read_text(encoding="utf-8").splitlines())
        code = re.sub(r'"""(.|\n)*?"""', "", code)          # docstrings may name the values
        found += [(where, fact) for fact in FACTS if re.search(fact, code)]
    assert found == []


def test_the_assembler_symbols_are_the_targets():
    from bobc.sass.tables.arch import ENCODINGS
    from bobc.targets import TARGETS

    for name, target in TARGETS.items():
        assert ENCODINGS[name].symbols == {"param": target.parameter_base,
                                           "memory_descriptor": target.memory_descriptor}


def test_class_names_are_the_targets():
    from bobc.nvidia.classes import CLASS_IDS, class_name
    from bobc.targets import CLASS_NAMES, SM90

    assert {v: k for k, v in CLASS_IDS.items()} == CLASS_NAMES
    assert class_name(SM90.compute_class) == "HOPPER_COMPUTE_A"


def test_the_certifier_reads_the_targets_limits():
    """A target whose table allows a smaller grid, fewer threads or less shared memory refuses
    a plan the real target admits, naming the bound (tests/images/synthetic_bob's plan)."""
    import sys
    sys.path.insert(0, str(REPO / "tests/images"))
    import synthetic_bob as bob
    from bobc.certify import findings
    from bobc.targets import SM86

    plan = bob.bob_plan()
    assert findings(plan, SM86) == []
    small = dataclasses.replace(SM86, limits=dataclasses.replace(SM86.limits, grid_x=255, threads_per_block=128))
    messages = [f.message for f in findings(plan, small)]
    assert any("bob-adamw)'s grid x is 256: outside 1..255" in m for m in messages), messages
    assert any("region bob-adamw declares 256 threads per block; the hardware allows 1..128" in m
               for m in messages), messages
    regions = tuple(dataclasses.replace(r, shared_bytes=64 * 1024) if r.identity == "bob-adamw" else r
                    for r in plan.program.regions)
    greedy = dataclasses.replace(plan, program=dataclasses.replace(plan.program, regions=regions))
    assert findings(greedy, SM86) == []
    # an SM whose largest carve-out is 64 KiB gives a block 64 KiB less the 1 KiB reserve
    smaller = dataclasses.replace(SM86, sm_resources=dataclasses.replace(SM86.sm_resources,
                                                                         carveouts_kib=(0, 8, 16, 32, 64)))
    assert [f.message for f in findings(greedy, smaller)] == [
        "region bob-adamw declares 65536 bytes of shared memory; a block on sm_86 has at most 64512 (the SM's 64 KiB "
        "carve-out less the 1024 bytes the system reserves per block)"]
