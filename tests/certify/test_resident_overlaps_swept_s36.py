"""Residents' overlaps found by a sweep in address order (probe s36 scale finding 3): the check
compared every pair of residents (16,000 residents: 44 s).  The oracle is the bytes themselves:
two residents overlap when their byte sets meet."""
from __future__ import annotations

import dataclasses
import random

import synthetic_bob as bob
from bobc.certify import residents as residents_module
from bobc.certify.residents import check_residents, overlapping_pairs
from bobc.plan.model import Resident


def _random_residents(rng: random.Random, count: int, disjoint: bool) -> tuple[Resident, ...]:
    out, at = [], 0
    for i in range(count):
        if disjoint:
            at += rng.choice((0, 0, 1, 5))
            size = rng.choice((0, 1, 3, 8))
            out.append(Resident(f"r{i}", at, size, 1))
            at += size
        else:
            out.append(Resident(f"r{i}", rng.randrange(40), rng.choice((0, 1, 2, 5, 12, 30)), 1))
    rng.shuffle(out)
    return tuple(out)


def _bytes(r: Resident) -> set[int]:
    return set(range(r.address, r.address + r.size))


def test_the_pairs_are_those_whose_bytes_meet_in_the_order_of_a_loop_over_pairs():
    rng = random.Random(36)
    for trial in range(300):
        residents = _random_residents(rng, rng.randrange(0, 25), disjoint=trial % 3 == 0)
        expected = [(i, j) for i in range(len(residents)) for j in range(i + 1, len(residents))
                    if _bytes(residents[i]) & _bytes(residents[j])]
        assert overlapping_pairs(residents) == expected, residents


def _plan_with_extra_residents(count: int, below: bool = False):
    """Bob's plan with `count` more one-byte residents listed before its own, past its arena's
    end (`below`: below its start)."""
    plan = bob.bob_plan()
    first = bob.PARAMETERS - 256 * count if below else bob.PARAMETERS + bob.ARENA_BYTES
    extra = tuple(Resident(f"extra-{i}", first + 256 * i, 1, 1) for i in range(count))
    return dataclasses.replace(plan, arena=dataclasses.replace(plan.arena, globals=extra + plan.arena.globals))


def _ends_counted(monkeypatch, module):
    calls = [0]
    real = module.end

    def counted(r):
        calls[0] += 1
        return real(r)
    monkeypatch.setattr(module, "end", counted)
    return calls


def test_the_overlap_check_does_not_compare_every_pair(monkeypatch):
    count = 3000
    plan = _plan_with_extra_residents(count)
    plan = dataclasses.replace(plan, arena=dataclasses.replace(plan.arena, globals=plan.arena.globals + (
        Resident("late", bob.PARAMETERS + bob.ARENA_BYTES + 256 * 7, 300, 1),)))      # overlaps extra-7 and -8
    calls = _ends_counted(monkeypatch, residents_module)
    overlaps = [f.message for f in check_residents(plan) if f.kind == "overlap"]
    base = bob.PARAMETERS + bob.ARENA_BYTES
    assert overlaps == [
        f"residents extra-7 [{base + 1792:#x}, {base + 1793:#x}) and late [{base + 1792:#x}, {base + 2092:#x}) "
        f"overlap by 1 bytes at [{base + 1792:#x}, {base + 1793:#x})",
        f"residents extra-8 [{base + 2048:#x}, {base + 2049:#x}) and late [{base + 1792:#x}, {base + 2092:#x}) "
        f"overlap by 1 bytes at [{base + 2048:#x}, {base + 2049:#x})"], overlaps
    assert calls[0] < 10 * count, calls[0]            # a loop over pairs calls it ~count^2 times
