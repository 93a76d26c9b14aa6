"""The resident holding an address, found by bisection when the residents are disjoint (probe
s36 scale finding 4): each pointer walked the residents in order (pointers x residents).  The
oracle is the bytes themselves: an address is held by the first resident (in the plan's order)
whose bytes hold it."""
from __future__ import annotations

import random

import synthetic_bob as bob
from bobc.certify import pointers
from bobc.certify.pointers import ByAddress, _containing, check_pointers
from tests.certify.test_resident_overlaps_swept_s36 import (  # one generator of residents and plans
    _bytes, _ends_counted, _plan_with_extra_residents, _random_residents)


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
