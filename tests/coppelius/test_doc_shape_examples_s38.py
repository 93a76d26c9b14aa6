"""docs/coppelius.md, "Shapes": the shapes it gives as served and as refused, and the deepest shapes
the two layer rules leave, are what the shape rules say (probe s38 docs7: no test read the
examples or the maxima).  The rules are coppelius_model.config.shape_refusal, which
tests/coppelius/test_shape_limits.py holds to the plan's coppeliusShapeRefusal."""
from __future__ import annotations

import re

from .conftest import REPOSITORY

DOC = REPOSITORY / "docs" / "coppelius.md"
SHAPE = re.compile(r"(\d+) x (\d+) x (\d+)")
# the doc's word for a rule -> the field a refusal names for it
FIELDS = {"width": "coppeliusShapeWidth", "context": "coppeliusShapeContext", "chunk": "coppeliusShapeChunkBytes",
          "its checkpoint": "coppeliusShapeLayers", "its launches": "coppeliusShapeLayers"}


def text() -> str:
    return " ".join(DOC.read_text(encoding="utf-8").split())


def refusal(L: int, d: int, T: int) -> str:
    from coppelius_model import config
    return config.shape_refusal(L, d, T, config.DEFAULT_CHUNK_BYTES)


def test_the_served_examples_are_served_and_the_refused_ones_refused_for_the_rules_named():
    said = re.search(r"for example (.*?)\. Not (.*?)\. Before the rule", text())
    assert said
    served = [tuple(map(int, s)) for s in SHAPE.findall(re.sub(r"\([^)]*\)", "", said.group(1)))]
    assert len(served) >= 4, served
    for shape in served:
        assert refusal(*shape) == "", shape
    refused = 0
    for shapes, why in re.findall(r"((?:\d+ x \d+ x \d+(?: or |, )?)+) \(([^)]*(?:\([^)]*\)[^)]*)?)\)", said.group(2)):
        rules = [w for w in FIELDS if re.search(rf"\b{w}\b", why)]
        assert rules, why
        for shape in SHAPE.findall(shapes):
            shape = tuple(map(int, shape))
            refused += 1
            fields = {FIELDS[w] for w in rules}
            named = set(re.findall(r"\((coppeliusShape\w+)\)", refusal(*shape)))
            assert named == fields, (shape, why, refusal(*shape))
    assert refused >= 5


def test_the_deepest_shapes_are_the_rules():
    for pattern in (r"at (\d+) x (\d+) with the 8 MiB chunk that is L <= (\d+)",
                    r"At d = (\d+), T = (\d+) that is L <= (\d+)"):
        found = re.search(pattern, text())
        assert found, pattern
        d, T, deepest = (int(v) for v in found.groups())
        assert refusal(deepest, d, T) == "" and refusal(deepest + 1, d, T) != "", (d, T, deepest)
