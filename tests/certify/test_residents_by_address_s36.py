"""The resident holding an address, found by bisection when the residents are disjoint (probe
s36 scale finding 4): each pointer walked the residents in order (pointers x residents).  The
oracle is the bytes themselves: an address is held by the first resident (in the plan's order)
whose bytes hold it."""
from __future__ import annotations

import dataclasses
import random

import synthetic_bob as bob
from bobc.certify import pointers
from bobc.certify.pointers import ByAddress, _containing, check_pointers
from bobc.plan.model import Resident
from tests.certify.test_resident_overlaps_swept_s36 import _bytes, _random_residents  # one generator of residents


def test_the_holder_of_an_address_is_the_first_whose_bytes_hold_it():
    rng = random.Random(37)
    for trial in range(300):
        residents = _random_residents(rng, rng.randrange(0, 25), disjoint=trial % 2 == 0)
        indexed = ByAddress(residents)
        assert tuple(indexed) == residents                   # the same residents, in the same order
        for address in range(-2, 130):
            expected = next((r for r in residents if address in _bytes(r)), None)
            assert _containing(indexed, address) is expected
            assert _containing(residents, address) is expected


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


def test_each_pointer_finds_its_resident_without_walking_them_all(monkeypatch):
    count = 3000
    plan = _plan_with_extra_residents(count, below=True)
    calls = _ends_counted(monkeypatch, pointers)
    assert check_pointers(plan, bob_contracts()) == check_pointers(bob.bob_plan(), bob_contracts())
    assert calls[0] < 10 * count, calls[0]            # a walk per pointer: ~count x pointers


def bob_contracts():
    from bobc.certify import kernel_contracts
    from bobc.targets import SM90

    contracts, faults = kernel_contracts(bob.bob_plan(), SM90)
    assert not faults
    return contracts
