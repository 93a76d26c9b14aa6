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
