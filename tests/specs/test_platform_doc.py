"""docs/platform.md has a section for every platform module seeds 003 and 004 import.

The host plan (PlanHost, PlanHostAdamW, PlanHostRequest) is documented in
docs/host-steps.md; modules that were already in specs/ before the seeds'
platform (Std.Natural, ...) are named in the doc's last section.
"""
from __future__ import annotations

import re

from bobc.language.parse import parse_file

from .conftest import REPOSITORY

SEEDS = [REPOSITORY / "examples/partitioned_regression/PartitionedRegression/Build/CoordinateDevice.bob",
         REPOSITORY / "examples/coppelius/Coppelius/Build/NativeHost.bob"]
MODEL = ("PartitionedRegression.", "Coppelius.", "Realization.")
HOST_PLAN = {"Platform.Linux.Nvidia.PlanHost", "Platform.Linux.Nvidia.PlanHostAdamW", "Platform.Linux.Nvidia.PlanHostRequest"}


def test_every_imported_platform_module_has_a_section():
    text = (REPOSITORY / "docs/platform.md").read_text(encoding="utf-8")
    headings = " ".join(re.findall(r"^### (.+)$", text, re.M))
    already = text[text.index("## Modules the seeds use that were already here"):]
    imported = {i.module for seed in SEEDS for i in parse_file(seed).imports}
    platform = {m for m in imported if not m.startswith(MODEL)} - HOST_PLAN
    assert len(platform) > 30
    for module in sorted(platform):
        assert (re.search(rf"(?<![\w.]){re.escape(module)}(?![\w])", headings)
                or module.startswith("Data.SHA256") and "Data.SHA256Core" in headings
                or module in already), f"docs/platform.md has no section for {module}"
        assert (REPOSITORY / "specs" / (module.replace(".", "/") + ".bob")).is_file(), module
