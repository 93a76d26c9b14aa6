"""The runtime and the host generator hold nothing of a model's: every size,
identity, record check and initializer comes from the plan (issue 14).  Bob's
numbers may appear only in Bob's example, the runtime's own sample test data
(runtime_c/tests/) and the Bob reference model still under compiler/bobc/reference/."""
from __future__ import annotations

import re
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]

# Bob's sizes and names (../shared/docs/bob.md, docs/formats.md), as they would be written
BOB = [r"\b1564\b", r"\b5120\b", r"\b65536u?\b", r"\b786432\b", r"\b262144\b", r"bob-seed-v1",
       r"BOBINPUT", r"bobNativeHost", r"\b0x160\b", r"\b528\b", r"\b1552\b", r"BOB_VOCAB",
       r"BOB_PROMPTS", r"adamw_hyper"]

GENERAL = sorted([*REPO.glob("runtime_c/*.c"), *REPO.glob("runtime_c/*.h"),
                  *REPO.glob("compiler/bobc/host/**/*.py"), *REPO.glob("compiler/bobc/host/templates/*"),
                  *REPO.glob("compiler/bobc/plan/*.py"), REPO / "compiler/bobc/pipeline.py"])
# the GPU bring-up (nv_*.c) counts 32-bit registers and such; it is checked for names only
SIZES_MAY_APPEAR = {"nv_shim.c", "nv_shim.h", "nv_rm.h", "nv_uvm.h", "nv_ctrl.h", "nv_status.c", "nv_status.h",
                    "nv_classes.h", "nv_targets.c"}


@pytest.mark.parametrize("path", GENERAL, ids=lambda p: str(p.relative_to(REPO)))
def test_no_bob_constant(path):
    text = path.read_text(encoding="utf-8")
    patterns = BOB if path.name not in SIZES_MAY_APPEAR else [p for p in BOB if not p.startswith(r"\b")]
    found = [(pattern, text.count("\n", 0, m.start()) + 1) for pattern in patterns
             for m in [re.search(pattern, text)] if m]
    assert not found, f"{path.relative_to(REPO)} holds Bob's {found}"
