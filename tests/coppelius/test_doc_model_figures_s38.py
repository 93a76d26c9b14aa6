"""docs/coppelius.md's sizes, recomputed from the document's own definitions (probe s38 docs7: no test
read them).  The configuration table's parameter counts from "The flat parameter order" (each tensor
at a multiple of 64 elements), the checkpoint payload (12 N + 16), and the arena's figures from the
arena table's byte expressions evaluated in the table's order, each resident 256-byte aligned: the
residents' extent, its 2 MiB rounding, the extent without the program residence, a layer's block
and the per-layer binary16 gradients' cost.  Each is also held to the code (coppelius_model.config,
layout, graph), so a figure that drifts from either the definitions or the code fails here."""
from __future__ import annotations

import re

import pytest

from .conftest import REPOSITORY

DOC = REPOSITORY / "docs" / "coppelius.md"
MiB = 1 << 20


def text() -> str:
    return " ".join(DOC.read_text(encoding="utf-8").split())


def number(s: str) -> int:
    return int(s.replace(",", ""))


def table(heading: str) -> list[list[str]]:
    """The rows (cells) of the first table after `heading`."""
    lines = DOC.read_text(encoding="utf-8").split(f"\n{heading}\n", 1)[1].splitlines()
    rows, started = [], False
    for line in lines:
        if line.startswith("|"):
            started = True
            cells = [c.strip() for c in line.strip().strip("|").split("|")]
            if not set("".join(cells)) <= set("-: "):
                rows.append(cells)
        elif started:
            break
    return rows[1:]


def configurations() -> dict[str, tuple[int, int, int, int, int, int]]:
    """name -> (L, d, H, dh, MLP, T, parameters) of the configuration table."""
    out = {}
    for cells in table("## The configurations"):
        name = cells[0].split()[0]
        heads, dh = (int(v) for v in cells[3].split(" x "))
        out[name] = (int(cells[1]), int(cells[2]), heads, dh, int(cells[4]), int(cells[5]), number(cells[6]))
    return out


def flat_count(L: int, d: int, T: int) -> int:
    """The flat parameter order's element count, as the document defines it."""
    def placed(n: int) -> int:
        return -(-n // 64) * 64
    decay = [256 * d, T * d] + [3 * d * d, d * d, 4 * d * d, 4 * d * d] * L + [d * 256]
    no_decay = [d, d, 3 * d, d, d, d, 4 * d, d] * L + [d, d]
    sizes = decay + no_decay
    return sum(placed(n) for n in sizes[:-1]) + sizes[-1]


def evaluate(expression: str, values: dict[str, int]) -> int:
    """'4N', '2Td', '4HT^2', '4T 256', '4,259,840', '2 MiB', '16384'."""
    expression = expression.strip()
    if expression.endswith(" MiB"):
        return number(expression[:-4]) * MiB
    total = 1
    for digits, letter, square in re.findall(r"([\d,]+)|([NTdHF])(\^2)?", expression):
        if digits:
            total *= number(digits)
        else:
            total *= values[letter] ** (2 if square else 1)
    return total


def arena_rows(values: dict[str, int]) -> tuple[list[int], list[int], list[int]]:
    """(the sizes before the layers, one layer's, after the layers), from the arena table."""
    before, layer, after = [], [], []
    for cells in table("## The arena"):
        names, sizes = cells[0], cells[1]
        if names.startswith("per layer l: "):
            names = names[len("per layer l: "):]
        count = len([n for n in names.split(", ") if n])
        if sizes.endswith(" each"):
            parts = [sizes[:-len(" each")]] * count
        else:
            parts = sizes.split(", ")        # a figure's thousands separators have no space after them
        assert len(parts) == count, (cells[0], sizes)
        where = layer if "h{l}" in names else (after if layer else before)
        where += [evaluate(p, values) for p in parts]
    return before, layer, after


def aligned(n: int) -> int:
    return -(-n // 256) * 256


def extent(sizes: list[int]) -> int:
    end = 0
    for size in sizes:
        end = aligned(end) + size
    return end


@pytest.mark.parametrize("name", ["small", "large"])
def test_the_parameter_counts_are_the_flat_orders(name):
    from coppelius_model import config
    L, d, H, dh, mlp, T, parameters = configurations()[name]
    c = config.named(name)
    assert (L, d, T, H, dh, mlp) == (c.layers, c.width, c.context, c.heads, c.head_dimension, c.hidden)
    assert H * dh == d and mlp == 4 * d
    assert parameters == flat_count(L, d, T) == c.parameter_count


def test_the_payload_and_the_example_shape():
    from coppelius_model import config, layout
    said = re.search(r"12N \+ 16 bytes \(small ([\d,]+); large ([\d,]+)\)", text())
    assert said
    for figure, name in zip(said.groups(), ("small", "large")):
        L, d, _, _, _, T, _ = configurations()[name]
        assert number(figure) == 12 * flat_count(L, d, T) + 16 == layout.checkpoint_payload_bytes(config.named(name))
    example = re.search(r"for example 1 x 256 x 128 \(([\d,]+) parameters", text())
    assert example and number(example.group(1)) == flat_count(1, 256, 128) == config.named("1x256x128").parameter_count


@pytest.mark.parametrize("index,name", [(0, "small"), (1, "large")])
def test_the_arena_figures_are_the_tables(index, name):
    from coppelius_model import config, layout
    L, d, H, dh, mlp, T, N = configurations()[name]
    before, layer, after = arena_rows({"N": N, "T": T, "d": d, "H": H, "F": mlp})
    sizes = before + layer * L + after
    assert sizes == [size for _, size in layout.resident_sizes(config.named(name))], "the table is layout.py's"
    said = re.search(r"the residents' extent, ([\d,]+) / ([\d,]+) bytes; the video arena rounds it up to 2 MiB: "
                     r"([\d,]+) / ([\d,]+) MiB; without the program residence ([\d,]+) / ([\d,]+) bytes", text())
    assert said
    whole = extent(sizes)
    assert number(said.group(1 + index)) == whole
    assert number(said.group(3 + index)) == -(-whole // (2 * MiB)) * 2 == layout.arena_bytes(config.named(name)) // MiB
    assert after[-1] == 2 * MiB, "the program residence is the last resident"
    assert number(said.group(5 + index)) == extent(sizes[:-1])
    block = re.search(r"has one size \(small ([\d,]+) bytes, large ([\d,]+)\)", text())
    assert block and number(block.group(1 + index)) == sum(aligned(s) for s in layer)
    arena = layout.arena(config.named(name))
    assert arena["h1.x"].address - arena["h0.x"].address == sum(aligned(s) for s in layer)
    cost = re.search(r"\(18Td a layer, less the 14Td .*?\) cost small ([\d,]+) bytes, large ([\d,]+)", text())
    assert cost and number(cost.group(1 + index)) == 18 * T * d * L - 14 * T * d


def test_the_launch_counts_are_graphs():
    from coppelius_model import config, graph, layout
    said = re.search(r"That is (\d+) L \+ (\d+) launches: (\d+) \(small\), (\d+) \(large\); tiny (\d+)", text())
    assert said
    per_layer, fixed, small, large, tiny = (int(v) for v in said.groups())
    for name, count in (("small", small), ("large", large), ("tiny", tiny)):
        c = config.named(name)
        assert count == per_layer * c.layers + fixed == len(graph.update_launches(c)), name
    full = re.search(r"small F = (\d+), large F = (\d+)", text())
    assert full
    for figure, name in zip(full.groups(), ("small", "large")):
        c = config.named(name)
        assert int(figure) == layout.checkpoint_payload_bytes(c) // c.chunk_bytes
        assert int(figure) == sum(1 for _, n in layout.chunks(c) if n == c.chunk_bytes)
