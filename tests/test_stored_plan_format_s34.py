"""A plans/ entry (bobc/stored.py) keeps the kernel facts a certification is given (each region's
register needs, the source its code was assembled from, that assembly: stored.KERNEL_FACTS) in a
field of their own, beside the plan, under its layout's number (stored.PLAN_FORMAT, in the key and
the record).  They once travelled in the slot of the kernels' register needs; an entry of that
layout, or of any other, is a miss: the plan is extracted again and the entry replaced, never read
as this layout (docs/cache.md, plans/)."""
from __future__ import annotations

import pickle
from pathlib import Path

import pytest

from bobc import cache, pipeline, stored
from bobc.targets import SM86

REPO = Path(__file__).resolve().parents[1]
PLAN = REPO / "examples/linear_regression/LinReg/Build/NativeHost.bob"


def _only_entry(cache_dir: Path) -> tuple[str, list]:
    """The key of the one plans/ entry and what it holds: (kernel sources read, *values)."""
    [path] = list((cache_dir / "plans").iterdir())
    return path.name, pickle.loads(cache.read("plans", path.name))


@pytest.fixture
def extractions(monkeypatch):
    import bobc.plan.extract as extract_module

    calls = []
    real = extract_module.extract_plan
    monkeypatch.setattr(extract_module, "extract_plan", lambda *a, **k: calls.append(1) or real(*a, **k))
    return calls


def test_the_kernel_facts_are_a_field_of_their_own(cache_dir, extractions):
    program = pipeline.load(PLAN, SM86)
    plan = pipeline.check_and_certify(program, SM86)
    _, (listing, *values) = _only_entry(cache_dir)
    assert len(values) == 1 and values[0]["format"] == stored.PLAN_FORMAT
    record = values[0]
    assert record["plan"] == plan
    facts = record["facts"]
    assert set(facts) == {"needs", "encoded_from", "assembled"}
    # what this build's encoders made, as a certification of the fresh plan is given them
    assert facts["needs"] == pipeline.kernel_needs(program, plan) and facts["needs"]
    assert facts["encoded_from"] == pipeline.kernel_sources(program, plan) and facts["encoded_from"]
    assert set(facts["assembled"]) == set(facts["encoded_from"])
    # a second run is given them from the entry: nothing is extracted again
    again = pipeline.load(PLAN, SM86)
    recalled = pipeline.check_and_certify(again, SM86)
    assert recalled == plan and len(extractions) == 1
    assert stored.facts_of(again, recalled) == facts


def _format_1(plan, facts):            # the facts in the register needs' slot, no format
    return (plan, facts)


def _marked_1(plan, facts):            # this layout, marked as another
    return ({"format": stored.PLAN_FORMAT - 1, "plan": plan, "facts": facts},)


def _needs_alone(plan, facts):         # this layout, the register needs alone in the facts' field
    return ({"format": stored.PLAN_FORMAT, "plan": plan, "facts": facts["needs"]},)


@pytest.mark.parametrize("layout", [_format_1, _marked_1, _needs_alone])
def test_an_entry_of_another_layout_is_extracted_again_and_replaced(cache_dir, extractions, layout):
    plan = pipeline.check_and_certify(pipeline.load(PLAN, SM86), SM86)
    key, (listing, record) = _only_entry(cache_dir)
    cache.write("plans", key, pickle.dumps((listing, *layout(record["plan"], record["facts"]))))
    assert pipeline.check_and_certify(pipeline.load(PLAN, SM86), SM86) == plan
    assert len(extractions) == 2
    assert _only_entry(cache_dir) == (key, (listing, record))       # the entry of this layout again
