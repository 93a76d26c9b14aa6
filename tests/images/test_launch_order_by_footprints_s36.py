"""Launch order answered through the launches' footprints (probe s36 scale finding 5): a
submission of launches that touch disjoint bytes asked every later launch for each launch's
first conflict, every leaf for each launch, and kept every pair asked -- quadratic time and
memory (4,000 such launches: 1 GB).  With a `conflicts` that carries its footprints
(bobc.certify.footprints.program_conflicts's), the order past a few places is answered through
them; it is the order the pairwise rule gives, whatever the footprints."""
from __future__ import annotations

import random

import pytest

from bobc.certify.footprints import Footprint
from bobc.nvidia import launch_order as launch_order_module
from bobc.nvidia.launch_order import launch_order


def with_footprints(prints):
    def conflicts(a, b):
        x, y = prints[a], prints[b]
        return x is None or y is None or x.conflicts(y)
    conflicts.footprints = prints
    return conflicts


def pairwise(prints):
    """The same rule, without the footprints: asked pair by pair."""
    rule = with_footprints(prints)
    return lambda a, b: rule(a, b)


def random_footprint(rng: random.Random, span: int):
    if rng.random() < 0.03:
        return None                                      # unknown: conflicts with every launch

    def ranges(k):
        out = []
        for _ in range(k):
            a = rng.randrange(span)
            out.append((a, a + rng.choice((0, 1, 2, 4, 16))))
        return out
    return Footprint(ranges(rng.randrange(0, 4)), ranges(rng.randrange(0, 3)))


@pytest.mark.parametrize("seed", range(12))
def test_the_order_is_the_pairwise_rule_s(seed, monkeypatch):
    rng = random.Random(seed)
    monkeypatch.setattr(launch_order_module, "_ASKED", rng.choice((0, 1, 2, 5)))   # the footprints answer early
    count = rng.randrange(1, 120)
    prints = [random_footprint(rng, rng.choice((8, 64, 4096))) for _ in range(count)]
    submissions = []
    for _ in range(rng.randrange(1, 4)):
        first = rng.randrange(count)
        sequence = list(range(first, min(count, first + rng.randrange(1, 100))))
        if rng.random() < 0.3:
            sequence += rng.sample(range(count), min(count, 5))          # a launch sent twice, or out of order
        submissions.append(sequence)
    for slots in (1, 2):
        assert launch_order(submissions, with_footprints(prints), slots) == \
            launch_order(submissions, pairwise(prints), slots)


def _disjoint(count):
    """`count` launches reading one table, each writing its own 256 bytes."""
    return [Footprint([(0, 64)], [(4096 + 256 * i, 4096 + 256 * (i + 1))]) for i in range(count)]


def test_launches_on_disjoint_bytes_all_run_at_once():
    # each is sent with no wait, beside the others; the last (nothing could run beside it) is the
    # first one's dependent -- as the pair-by-pair rule has it
    for count in (3, 40, 200):
        order = launch_order([list(range(count))], pairwise(_disjoint(count)))
        assert [send.launch for send in order.sends[0]] == list(range(count - 1))
        assert not any(send.after_idle for send in order.sends[0])
        assert order.dependents == {0: (count - 1,)}
        assert launch_order([list(range(count))], with_footprints(_disjoint(count))) == order


def test_launches_on_disjoint_bytes_are_not_asked_pair_by_pair():
    count = 3000
    prints = _disjoint(count)
    asked = [0]
    rule = with_footprints(prints)

    def counted(a, b):
        asked[0] += 1
        return rule(a, b)
    counted.footprints = prints
    order = launch_order([list(range(count))], counted)
    assert [send.launch for send in order.sends[0]] == list(range(count - 1))
    assert not any(send.after_idle for send in order.sends[0])
    assert order.dependents == {0: (count - 1,)}
    assert asked[0] < 100 * count, asked[0]       # pair by pair: count^2 / 2 (4.5 M)


def _chain_with_leaves(count):
    """Launch 0 writes g; then alternately a chain launch (reading what the chain launch before it
    wrote, writing 16 bytes of its own) and a leaf reading g and writing 16 bytes nothing reads:
    every leaf forks, and the last spine launch it conflicts with is launch 0, all the chain back."""
    prints = [Footprint([], [(0, 16)])]
    last = (0, 16)
    for i in range(1, count):
        if i % 2:
            prints.append(Footprint([last], [((1 << 20) + 16 * i, (1 << 20) + 16 * i + 16)]))
            last = prints[-1].writes[0]
        else:
            prints.append(Footprint([(0, 16)], [((1 << 24) + 16 * i, (1 << 24) + 16 * i + 16)]))
    return prints


def test_a_leaf_beside_a_long_chain_is_not_searched_for_pair_by_pair():
    """Probe s37 orderfuzz finding 2: a forking launch found the last spine launch it conflicts
    with by asking every spine launch back from the end, and every pair asked was kept -- n^2 / 8
    conflict tests (4,000 launches: 2 M tests, 6 s, 205 MB).  Through the footprints it is the
    same order: the leaves a side chain off launch 0, the chain its spine."""
    count = 3000
    prints = _chain_with_leaves(count)
    asked = [0]
    rule = with_footprints(prints)

    def counted(a, b):
        asked[0] += 1
        return rule(a, b)
    counted.footprints = prints
    order = launch_order([list(range(count))], counted)
    spine = [0] + list(range(1, count, 2))
    leaves = list(range(2, count, 2))
    assert order.sends == ((launch_order_module.Send(0, False),),)
    assert order.dependents[0] == (1, 2)
    assert all(order.dependents[leaf] == (leaf + 2,) for leaf in leaves[:-1])
    assert all(order.dependents[s] == (t,) for s, t in zip(spine[1:], spine[2:]))
    assert asked[0] < 100 * count, asked[0]       # pair by pair: count^2 / 8 (1.1 M)


@pytest.mark.parametrize("seed", range(8))
def test_a_long_chain_with_leaves_is_ordered_as_pair_by_pair_s37(seed, monkeypatch):
    """Chains with leaves reading bytes written anywhere back along them, and noise: the spine
    search through the footprints gives the order asking pair by pair gives."""
    rng = random.Random(seed)
    monkeypatch.setattr(launch_order_module, "_ASKED", rng.choice((0, 1, 2, 5, 32)))
    count = rng.randrange(40, 300)
    prints, chain = [], []
    for i in range(count):
        r = rng.random()
        mine = (1 << 20) + 16 * i
        if r < 0.03:
            prints.append(None)
        elif r < 0.5 or not chain:
            prints.append(Footprint(chain[-1:], [(mine, mine + 16)]))
            chain.append((mine, mine + 16))
        elif r < 0.9:
            prints.append(Footprint([rng.choice(chain)], [(mine + (1 << 24), mine + (1 << 24) + rng.choice((0, 16)))]))
        else:
            prints.append(Footprint([], [rng.choice(chain)]))
    submissions = [list(range(count))]
    for _ in range(rng.randrange(0, 3)):
        submissions.append(sorted(rng.sample(range(count), rng.randint(1, count))))
    for slots in (1, 2):
        assert launch_order(submissions, with_footprints(prints), slots) == \
            launch_order(submissions, pairwise(prints), slots)
