"""docs/coppelius.md, "Shapes": a checkpoint chunk is three submissions (scatter, fence, gather),
the one count the page gives (probe s43 docs12 finding 3: its closing paragraph said "each is two
submissions" while its chunk rule, coppelius_model.config's CHUNKS_MOST, counts three).

The oracle is coppelius_model.graph, the executable specification of every submission: its pieces
are 3 per chunk and 5 more (initialize, forward, update, final, restore) for any chunk count.
"""
from __future__ import annotations

import re
from pathlib import Path

import pytest

from coppelius_model.config import LARGE, SMALL, CHUNKS_MOST, chunks_for
from coppelius_model.graph import pieces

REPO = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("config", [SMALL, LARGE], ids=["small", "large"])
def test_a_chunk_is_three_submissions(config):
    count = chunks_for(12 * config.parameter_count + 16, config.chunk_bytes)     # the payload, 12 N + 16
    names = [p.name for p in pieces(config)]
    chunks = sum(name.startswith("scatter-") for name in names)
    assert chunks == sum(name.startswith("gather-") for name in names) and chunks >= 2
    assert chunks == count
    assert len(names) == 3 * chunks + 5
    assert CHUNKS_MOST == (8192 // 8 - 5) // 3


def test_the_shapes_section_counts_three_submissions_a_chunk():
    text = (REPO / "docs" / "coppelius.md").read_text(encoding="utf-8")
    shapes = " ".join(text.split("\n## Shapes", 1)[1].split("\n## ", 1)[0].split())
    counts = re.findall(r"(?:each|a) (?:chunk )?is (\w+) submissions", shapes)
    assert "each chunk is three submissions" in shapes
    assert counts and set(counts) == {"three"}, counts
