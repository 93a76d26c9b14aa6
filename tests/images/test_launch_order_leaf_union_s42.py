"""A launch that only reads what a segment's leaves wrote must wait for them, also when the
leaves' bytes are answered through their union (launch_order._Union: more leaves than _ASKED).

Probe s42 mutants8: dropping the union's second test -- a leaf's writes meeting the launch's
reads (`_meets(self.writes, fp._touched.spans)`) -- passed every test: the pairwise comparison
in test_launch_order_by_footprints_s36 draws its footprints from wide spans, where the union
path rarely meets a read-after-write.  Mutated, the reader was chained after the segment's first
launch, beside the leaves whose bytes it reads: a race.

Expected values by hand from the rule in launch_order's docstring and docs/launch-order.md: two
launches the pushbuffer sends with no wait between them may run at the same time, so a launch
conflicting with a leaf of its segment opens the next segment, after a WAIT_FOR_IDLE; and the
order given through the footprints is the order the pairwise rule gives."""
from __future__ import annotations

import random

import pytest

from bobc.certify.footprints import Footprint
from bobc.nvidia import launch_order as launch_order_module
from bobc.nvidia.launch_order import LaunchOrder, Send, launch_order

from test_launch_order_by_footprints_s36 import pairwise, random_footprint, with_footprints


# 0 and 3 write [0, 16) (a chain); 1 and 2 write [16, 32) and [32, 48), conflicting with nothing
# until 4, which reads [16, 48): 1 and 2 are leaves sent beside the chain, 4 joins them.
PRINTS = [Footprint([], [(0, 16)]), Footprint([], [(16, 32)]), Footprint([], [(32, 48)]),
          Footprint([], [(0, 16)]), Footprint([(16, 48)], [])]


@pytest.mark.parametrize("asked", [0, 1, 32])
def test_a_launch_reading_what_leaves_wrote_opens_the_next_segment(asked, monkeypatch):
    monkeypatch.setattr(launch_order_module, "_ASKED", asked)      # 0, 1: the leaves answer as a union
    order = launch_order([[0, 1, 2, 3, 4]], with_footprints(PRINTS))
    # by hand: 0 starts the segment and names 3 (its only conflicting successor before the end,
    # 3 forks beside nothing, so it is 0's dependent); 1 and 2 are sent beside it; 4 reads what 1
    # and 2 write, so it is sent after a WAIT_FOR_IDLE, never chained into the segment
    assert order == LaunchOrder({0: (3,)}, ((Send(0, False), Send(1, False), Send(2, False), Send(4, True)),))
    assert 4 not in {d for started in order.dependents.values() for d in started}


@pytest.mark.parametrize("seed", range(40))
def test_narrow_spans_through_the_union_order_as_pair_by_pair(seed, monkeypatch):
    rng = random.Random(1000 + seed)
    monkeypatch.setattr(launch_order_module, "_ASKED", rng.choice((0, 1, 2)))
    count = rng.randrange(2, 40)
    prints = [random_footprint(rng, rng.choice((8, 64))) for _ in range(count)]
    submissions = [list(range(count))]
    for slots in (1, 2):
        assert launch_order(submissions, with_footprints(prints), slots) == \
            launch_order(submissions, pairwise(prints), slots)
