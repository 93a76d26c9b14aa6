"""A launch at no region's place is refused naming the regions nearest its place, not every
region (probe s36 scale finding 6: 500 regions made one 13.9 KB line, 20,000 would make
~600 KB; docs/limits.md: one error is a few lines whatever the plan holds).  A plan of a few
regions still has them all listed."""
from __future__ import annotations

import dataclasses

import pytest

from bench.scale_plans import with_regions
from bobc.cli import main
from bobc.errors import BobcError
from bobc.nvidia.encode import plan_layout
from bobc.plan.model import SHOWN_REGIONS, regions_near
from bobc.targets import SM86
from tests.images.synthetic_bob import PROGRAM_BASE, bob_whole_program_plan


def test_a_plan_of_many_regions_names_the_nearest(tmp_path, capsys):
    plan = with_regions(tmp_path / "plan", regions=40, updates=40, wrong_place=7)
    assert main(["check", str(plan)]) == 1
    err = capsys.readouterr().err
    first = err.splitlines()[0]
    assert ("launch 16 (linreg-sgd-7) runs the program address 0x1000001680 (place 0x1680 from the program base "
            "0x1000000000), which is no region's place (43 regions; the nearest: linreg-sgd-7 at 0x1600 below, "
            "linreg-sgd-8 at 0x1800 above)") in first, first
    assert len(err) < 1000, err


def test_a_few_regions_are_all_listed():
    placed = [(0x400 * k, f"r{k}") for k in range(SHOWN_REGIONS)]
    assert regions_near(placed, 0x10) == ", ".join(f"r{k} at {0x400 * k:#x}" for k in range(SHOWN_REGIONS))
    many = placed + [(0x400 * SHOWN_REGIONS, "last")]
    assert regions_near(many, 0x10) == f"{SHOWN_REGIONS + 1} regions; the nearest: r0 at 0x0 below, r1 at 0x400 above"
    assert regions_near(many, 0x10000) == f"{SHOWN_REGIONS + 1} regions; the nearest: last at 0x2000 below"


def test_the_encoder_names_the_nearest_too():
    program = bob_whole_program_plan()
    regions = program.regions
    more = tuple(dataclasses.replace(regions[0], identity=f"extra-{k}", place=0x100000 + 0x1000 * k)
                 for k in range(2 * SHOWN_REGIONS))
    launches = list(program.launches)
    launches[3] = dataclasses.replace(launches[3], program_address=PROGRAM_BASE + 0x100000 + 0x1010)
    program = dataclasses.replace(program, regions=regions + more, launches=tuple(launches))
    with pytest.raises(BobcError) as refused:
        plan_layout(program, SM86)
    message = str(refused.value)
    assert (f"matches no region's place (regions: {len(regions) + 2 * SHOWN_REGIONS} regions; the nearest: "
            f"extra-1 at {PROGRAM_BASE + 0x101000:#x} below, extra-2 at {PROGRAM_BASE + 0x102000:#x} above)") \
        in message, message
