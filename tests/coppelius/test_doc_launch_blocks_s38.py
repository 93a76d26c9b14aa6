"""The block sizes the documents give Coppelius's kernels are the ones graph.py launches them with
(probe s38 docs7, findings 1 and 2): docs/coppelius-kernels.md gave the three attention kernels
block 128 (their sources say 512, 512 and 256), and docs/coppelius.md's "256 otherwise" missed
loss-copy's 32.

Read: docs/coppelius-kernels.md's table (the last number of each row's "grid x block" cell is the
block) and docs/coppelius.md's "(block N for the products, N for A and -B, ..., N otherwise" sentence;
held to every launch of every submission graph.py builds, at both configurations."""
from __future__ import annotations

import re

import pytest

from .conftest import REPOSITORY

KERNELS_DOC = REPOSITORY / "docs" / "coppelius-kernels.md"
MODEL_DOC = REPOSITORY / "docs" / "coppelius.md"
PREFIX = "coppelius-"


def launches(name: str):
    from coppelius_model import config, graph
    return [launch for piece in graph.pieces(config.named(name)) for launch in piece.launches]


def table_blocks() -> dict[str, int]:
    """kernel (without the prefix) -> the block its table row gives."""
    rows, header = {}, None
    for line in KERNELS_DOC.read_text(encoding="utf-8").splitlines():
        if not line.startswith("|"):
            header = None
            continue
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if header is None:
            header = cells
            continue
        if set(cells[0]) <= set("-: "):
            continue
        cell = cells[header.index("grid x block")]
        rows[cells[0]] = int(re.findall(r"\d+", cell)[-1])
    return rows


def sentence_blocks() -> tuple[dict[str, int], int]:
    """docs/coppelius.md's block sentence: (kernel or 'products' -> block, the 'otherwise' block)."""
    text = " ".join(MODEL_DOC.read_text(encoding="utf-8").split())
    match = re.search(r"\(block (\d+ for the products(?:, \d+ for [^,;]+)*, \d+ otherwise);", text)
    assert match, "docs/coppelius.md's update paragraph states each kernel's block"
    named, otherwise = {}, None
    for part in match.group(1).split(", "):
        number, _, what = part.partition(" ")
        if what == "otherwise":
            otherwise = int(number)
            continue
        what = what.removeprefix("for ")
        if what == "the products":
            named["products"] = int(number)
            continue
        first, *more = [w.strip() for w in what.split(" and ")]
        named[first] = int(number)
        for other in more:            # "attention-forward and -backward": the first's stem, then the suffix
            named[first.rsplit("-", 1)[0] + other if other.startswith("-") else other] = int(number)
    return named, otherwise


@pytest.mark.parametrize("config", ["small", "large"])
def test_the_kernel_table_gives_each_launch_its_block(config):
    blocks = table_blocks()
    assert len(blocks) >= 20, blocks
    wrong = sorted({(launch.kernel, blocks[launch.kernel[len(PREFIX):]], launch.block)
                    for launch in launches(config)
                    if launch.kernel[len(PREFIX):] in blocks and blocks[launch.kernel[len(PREFIX):]] != launch.block})
    assert not wrong, f"docs/coppelius-kernels.md's block (kernel, doc, graph.py): {wrong}"


@pytest.mark.parametrize("config", ["small", "large"])
def test_the_update_paragraph_gives_each_launch_its_block(config):
    named, otherwise = sentence_blocks()
    wrong = set()
    for launch in launches(config):
        name = launch.kernel[len(PREFIX):]
        said = named.get("products") if name.startswith("gemm-") else named.get(name, otherwise)
        if said != launch.block:
            wrong.add((launch.kernel, said, launch.block))
    assert not wrong, f"docs/coppelius.md's block sentence (kernel, doc, graph.py): {sorted(wrong)}"
