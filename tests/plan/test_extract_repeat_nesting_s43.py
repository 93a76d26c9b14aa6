"""Plan extraction refuses host-step repeats nested past HOST_REPEAT_NESTING (64, docs/limits.md) at
the repeat past it, in the certifier's words (probe s43 smallfix).  Extraction reads a repeat's body
by recursing, so before, a plan nesting ~20,000 deep ended in a RecursionError (and GBs of `where`
strings) before the certifier's limit could be met.

Plans from bench/scale_plans.with_nested_repeats(out, k): LinReg's schedule with one Repeat 1 whose
body is gR0, and gR0 .. gR{k-1} each a Repeat 1 of the next: k + 1 repeats nested, the innermost
(nesting j) defined as gR{j-2}.  The bound is read from runtime_c/native_program.h
(NP_MAX_REPEAT_NESTING, the native hosts' own): the independent figure."""
from __future__ import annotations

import re
from pathlib import Path

import pytest

from bench.scale_plans import with_nested_repeats
from bobc import pipeline
from bobc.errors import BobcError
from bobc.targets import SM86

REPO = Path(__file__).resolve().parents[2]
NESTING = int(re.search(r"#define NP_MAX_REPEAT_NESTING (\d+)u",
                        (REPO / "runtime_c/native_program.h").read_text()).group(1))


def test_seventy_deep_is_refused_at_the_repeat_past_the_bound(tmp_path):
    assert NESTING == 64
    plan = with_nested_repeats(tmp_path / "deep", 69)           # 70 repeats nested
    with pytest.raises(BobcError) as caught:
        pipeline.extract(pipeline.load(plan, SM86), None)
    said = str(caught.value)
    assert f"nests repeats more than {NESTING} deep (one in another's body): nest fewer, or unroll the inner " \
           "ones" in said and "docs/limits.md" in said, said
    assert len(said) < 1000, said                                # the schedule's name, not 64 levels of path
    # at the 65th repeat, gR63's definition (the one past the bound)
    line = next(i for i, text in enumerate(plan.read_text().splitlines(), 1) if text.startswith("def gR63 "))
    span = caught.value.span
    assert span is not None and Path(span.path).name == plan.name and span.line == line, span


def test_sixty_four_deep_is_extracted(tmp_path):
    plan = with_nested_repeats(tmp_path / "deep", 63)           # 64 repeats nested
    extracted = pipeline.extract(pipeline.load(plan, SM86), None)
    depth, steps = 0, extracted.host.steps
    while (repeat := next((s for s in steps if s.kind.name == "repeat"), None)) is not None:
        depth, steps = depth + 1, repeat.body
    assert depth == NESTING
