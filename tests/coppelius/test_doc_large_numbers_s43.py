"""docs/coppelius.md, "Building the large configuration": the arena size, parameter count and
launch count it gives for the large shape are the large build's (probe s43 docs12 finding 4: it
said a 1,782,579,200-byte arena and 562 launches, where the plan has 1,780,482,048 bytes and 478
launches -- `bobc eval examples/coppelius/large/CoppeliusLarge.bob largeArenaBytes -I
examples/coppelius`, and largeLaunchCount).

The oracle is coppelius_model (layout.arena_bytes, config.LARGE, graph.pieces), the executable
specification tests/coppelius/test_plan_agrees.py holds the large plan's numbers to.
"""
from __future__ import annotations

import re
from pathlib import Path

from coppelius_model import layout
from coppelius_model.config import LARGE
from coppelius_model.graph import pieces

REPO = Path(__file__).resolve().parents[2]


def _number(text: str) -> int:
    return int(text.replace(",", ""))


def test_the_large_build_s_numbers_are_the_plan_s():
    text = (REPO / "docs" / "coppelius.md").read_text(encoding="utf-8")
    section = " ".join(text.split("\n## Building the large configuration", 1)[1].split("\n## ", 1)[0].split())
    arena = re.search(r"every resident inside the ([\d,]+)-byte arena", section)
    counts = re.search(r"([\d,]+) parameters, ([\d,]+) launches, as tests/coppelius/test_plan_agrees\.py checks",
                       section)
    assert arena and counts, "the section no longer states the arena, parameters and launches"
    assert _number(arena.group(1)) == layout.arena_bytes(LARGE)
    assert _number(counts.group(1)) == LARGE.parameter_count
    assert _number(counts.group(2)) == sum(len(piece.launches) for piece in pieces(LARGE))
