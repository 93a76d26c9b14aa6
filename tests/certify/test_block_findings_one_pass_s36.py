"""A kernel's declared block (`//@ block X Y Z`) is held to every launch of its region; the
certifier finds each region's launches in one pass over the launches for all regions
(probe s36 scale finding 2: a pass and a Region comparison per region, O(regions x
(regions + launches)): 3.8 s at 2,000 regions).  What it finds is unchanged."""
from __future__ import annotations

import dataclasses

from bobc.certify import kernel_contracts
from bobc.targets import SM86
from tests.images.synthetic_bob import ADAMW, LOSS, bob_plan


class CountedLaunches(tuple):
    """The plan's launches, counting how many times they are walked from the start."""
    walks = 0

    def __iter__(self):
        type(self).walks += 1
        return super().__iter__()


def _with_blocks(plan, change: dict[int, tuple[int, int, int]]):
    program = plan.program
    launches = CountedLaunches(dataclasses.replace(launch, block=change[i]) if i in change else launch
                               for i, launch in enumerate(program.launches))
    return dataclasses.replace(plan, program=dataclasses.replace(program, launches=launches))


def _block_messages(plan) -> list[str]:
    _, faults = kernel_contracts(plan, SM86)
    return [f.message for f in faults if f.kind == "block"]


def test_each_region_names_its_own_launches_of_the_wrong_block():
    plan = bob_plan()
    program = plan.program
    loss = [i for i, launch in enumerate(program.launches) if launch.region == LOSS]
    adamw = [i for i, launch in enumerate(program.launches) if launch.region == ADAMW]
    change = {loss[1]: (program.launches[loss[1]].block[0], 2, 1),
              loss[3]: (program.launches[loss[3]].block[0], 2, 1),
              adamw[0]: (program.launches[adamw[0]].block[0], 1, 3)}
    messages = _block_messages(_with_blocks(plan, change))
    assert len(messages) == 2, messages
    assert messages[0].startswith(f"launches {loss[1]}, {loss[3]} (bob-loss-gradient) run blocks of "), messages
    assert messages[1].startswith(f"launch {adamw[0]} (bob-adamw) runs blocks of "), messages
    assert _block_messages(plan) == []


def test_the_launches_are_walked_once_for_all_regions():
    plan = _with_blocks(bob_plan(), {})
    CountedLaunches.walks = 0
    assert _block_messages(plan) == []
    # four regions, each declaring its block: one walk, not one a region
    assert CountedLaunches.walks == 1
