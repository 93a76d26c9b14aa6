"""docs/limits.md's nesting row states how deep today's modules nest their parentheses ("today's
deepest is N (PATH)"), the headroom the limit of 200 leaves.  It said 21 while seed 004's graph
module nests 47 deep (probe s37 docs4 finding 1).  The figure is recomputed here from every
module the repository ships (examples/, specs/), by a count of its own (comments and byte-string
literals skipped, as docs/language.md says they are read), and held to the parser's own bound."""
from __future__ import annotations

import re
from pathlib import Path

import pytest

from bobc.language import limits, parse

REPO = Path(__file__).resolve().parents[2]


def deepest(text: str) -> int:
    """The most parentheses open at once, outside `--` comments and "..." literals."""
    depth = most = 0
    i, n = 0, len(text)
    while i < n:
        ch = text[i]
        if text.startswith("--", i):
            end = text.find("\n", i)
            i = n if end < 0 else end
            continue
        if ch == '"':
            i += 1
            while i < n and text[i] != '"':
                i += 2 if text[i] == "\\" else 1
        elif ch == "(":
            depth += 1
            most = max(most, depth)
        elif ch == ")":
            depth -= 1
        i += 1
    return most


def shipped() -> dict[str, int]:
    return {str(p.relative_to(REPO)): deepest(p.read_text(encoding="utf-8"))
            for folder in ("examples", "specs") for p in sorted((REPO / folder).rglob("*.bob"))}


def stated() -> tuple[int, str]:
    text = (REPO / "docs" / "limits.md").read_text(encoding="utf-8")
    found = re.search(r"today's deepest is (\d+) \(([^)]+\.bob)\)", text)
    assert found, "docs/limits.md's nesting row no longer states today's deepest module"
    return int(found.group(1)), found.group(2)


def test_the_stated_deepest_nesting_is_the_shipped_modules_own():
    figure, path = stated()
    depths = shipped()
    most = max(depths.values())
    assert figure == most, (f"docs/limits.md says today's deepest nesting is {figure}; the shipped "
                            f"modules' is {most}: {[p for p, d in depths.items() if d == most]}")
    assert depths[path] == most, f"{path} nests {depths[path]} deep, not the deepest {most}"
    assert f"today's deepest: {figure};" in (REPO / "compiler/bobc/language/limits.py").read_text()
    assert most < limits.NESTING_DEPTH


def test_the_parser_counts_the_named_module_as_the_figure_says(monkeypatch):
    figure, path = stated()
    text = (REPO / path).read_text(encoding="utf-8")
    monkeypatch.setattr(limits, "NESTING_DEPTH", figure)
    parse._check_nesting(text, path)                      # exactly at the figure: accepted
    monkeypatch.setattr(limits, "NESTING_DEPTH", figure - 1)
    with pytest.raises(parse.ParseError, match=f"parentheses nested {figure} deep"):
        parse._check_nesting(text, path)
