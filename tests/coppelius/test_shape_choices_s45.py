"""A refused width or context says what to choose instead, in the plan's words and the tools' alike.

Probe s45 coppuser: `coppelius_host.checkpoint fresh --config 2x192x128` (or `bobc check` of a
Configuration.bob of it) said "width 192 is not a multiple of 128 (...)" and "is not between 256 and
768 (...)", and a context of 96 "is not 128 or 256 (...)", each rule and whose it is but not what a
user should write instead.  The choices named are docs/coppelius.md's "Shapes": d in {256, 384, 512,
640, 768}, T in {128, 256} (written here from that sentence, not from the rules)."""
from __future__ import annotations

import re

import pytest

from coppelius_host import checkpoint
from coppelius_model.config import shape_refusal

WIDTHS = [256, 384, 512, 640, 768]          # docs/coppelius.md, "Shapes"
CONTEXTS = [128, 256]


def choices(said: str, field: str) -> list[str]:
    return re.findall(rf"{field} \(coppeliusShape\w+\) \d+ [^;]*?: choose ([^)]*)\)", said)


@pytest.mark.parametrize("layers, width, context", [(2, 192, 128), (1, 1024, 256), (1, 200, 96), (3, 256, 64)])
def test_the_plan_and_the_tools_name_the_choices(layers, width, context):
    plan = checkpoint.host_refusal(f"{layers}x{width}x{context}")       # Coppelius.Model, evaluated by bobc
    tools = shape_refusal(layers, width, context, 8388608)
    assert plan == tools
    if width not in WIDTHS:
        named = choices(plan, "width")
        assert named and all(c == "a multiple of 128 from 256 to 768" for c in named)
        assert [d for d in range(1, 2000) if d % 128 == 0 and 256 <= d <= 768] == WIDTHS
    if context not in CONTEXTS:
        assert choices(plan, "context") == ["128 or 256"]


def test_what_is_named_is_admitted():
    for d in WIDTHS:
        for t in CONTEXTS:
            assert shape_refusal(2, d, t, 8388608) == "", (d, t)
