"""docs/simulator.md says which dependent QMD slots the simulator runs and which it refuses, as
bobc.sim.qmd_reader does: V04_00's second slot (DEPENDENT_QMD_ENABLE(1), DEPENDENT_QMD1_POINTER)
is run (tests/sim/test_launch_order.py forks through it), V03_00's second (DEPENDENT_QMD1_ENABLE,
no pointer of its own in clc7c0qmd.h) is refused by name."""
from __future__ import annotations

import re

import pytest

from bobc.sim import qmd_reader
from bobc.sim.faults import Unmodeled
from bobc.targets import SM86

from . import test_launch_order as order
from .conftest import REPO

DOC = (REPO / "docs" / "simulator.md").read_text(encoding="utf-8")


def test_v03_00s_second_dependent_is_refused_by_its_field_name():
    built = order.images(SM86, [(order.B, order.A)])
    with pytest.raises(Unmodeled, match="DEPENDENT_QMD1_ENABLE"):
        order.run(SM86, built, qmd=order.set_field(built.qmd, SM86, 0, "DEPENDENT_QMD1_ENABLE", 1))


def test_the_doc_names_the_dependent_slots_as_the_reader_treats_them():
    flat = " ".join(DOC.split())
    run = {pointer for layout in qmd_reader.FACTS.values() for *_, pointer in layout["dependents"][1:]}   # second slots
    refused = {name for layout in qmd_reader.FACTS.values() for name in layout["unmodeled"] if "DEPENDENT" in name}
    for name in run | refused:
        assert name in flat, f"docs/simulator.md does not name {name}"
    # a refused second dependent is V03_00's: the one V04_00 has is run
    for sentence in re.split(r"(?<=[.;])\s", flat):
        if re.search(r"second dependent (QMD|slot)", sentence) and "refused" in sentence:
            assert "V03_00's second dependent" in sentence, sentence
