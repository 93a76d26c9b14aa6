"""docs/coppelius-host.md, "Building it": the number of kernels the program table holds is the
number of regions seed 004's images carry (probe s41 docs10 finding 1).

The page, written on 12-01, said "the 19 kernels assembled for the target"; since the attention
kernels were fused the images carry 17 regions.  The count is read from the golden sm_86 images'
manifest (tests/golden/coppelius-sm_86/manifest.json, which tests/coppelius/test_host_golden.py
holds to a rebuild of DirectArtifact byte for byte): its regions, one per kernel in the program
table, none pruned; the sm_90 build lays out the same kernels (one source each, per-target
variants keep their identity)."""
from __future__ import annotations

import json
import re

from .conftest import REPOSITORY

DOC = REPOSITORY / "docs" / "coppelius-host.md"
MANIFEST = REPOSITORY / "tests" / "golden" / "coppelius-sm_86" / "manifest.json"


def test_the_program_table_holds_as_many_kernels_as_the_page_says():
    manifest = json.loads(MANIFEST.read_text(encoding="utf-8"))
    kernels = {region["identity"] for region in manifest["regions"]}
    assert len(kernels) == len(manifest["regions"]) and not manifest["pruned_regions"]
    said = re.search(r"table \(the ([0-9]+) kernels assembled for the target",
                     " ".join(DOC.read_text(encoding="utf-8").split()))
    assert said, "docs/coppelius-host.md no longer counts the program table's kernels"
    assert int(said.group(1)) == len(kernels)
