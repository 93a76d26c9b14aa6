"""Residents that all share bytes (probe s44 extractscale): the refusal listed every overlapping
pair, n^2 / 2 findings -- 2,000 residents on the same 256 bytes made 1,999,000 findings, 50 s of
CPU and 2.8 GB before `bobc check` printed a 2-million-line refusal.  Now the first SHOWN_OVERLAPS
pairs the sweep meets are listed and one more finding says how many overlap in all.

The oracle is arithmetic: n residents on the same bytes are n (n - 1) / 2 overlapping pairs, and
a few residents' pairs (fewer than the bound) are every pair whose byte sets meet, as before."""
from __future__ import annotations

import dataclasses

import synthetic_bob as bob
from bobc.certify import residents as residents_module
from bobc.certify.residents import SHOWN_OVERLAPS, check_residents, overlaps_found
from bobc.plan.model import Resident


def _stacked(count: int):
    """Bob's plan with `count` more 256-byte residents, all on the same bytes past its arena."""
    plan = bob.bob_plan()
    base = bob.PARAMETERS + bob.ARENA_BYTES
    extra = tuple(Resident(f"extra-{i}", base, 256, 1) for i in range(count))
    return dataclasses.replace(plan, arena=dataclasses.replace(plan.arena, globals=extra + plan.arena.globals))


def test_residents_on_the_same_bytes_list_a_bounded_number_of_pairs_and_count_the_rest(monkeypatch):
    count = 3000
    built = [0]
    real = residents_module.Finding

    def counted(*args, **kwargs):
        built[0] += 1
        return real(*args, **kwargs)
    monkeypatch.setattr(residents_module, "Finding", counted)
    overlaps = [f for f in check_residents(_stacked(count)) if f.kind == "overlap"]
    pairs = count * (count - 1) // 2                     # every pair of the stack
    assert len(overlaps) == SHOWN_OVERLAPS + 1, len(overlaps)
    assert built[0] < 10 * SHOWN_OVERLAPS + count, built[0]   # one finding a pair: ~4.5 million
    assert overlaps[-1].message == (f"residents overlap in {pairs - SHOWN_OVERLAPS:,} more pairs than the "
                                    f"{SHOWN_OVERLAPS} listed ({pairs:,} pairs in all)")
    assert "place each resident on bytes of its own" in overlaps[-1].hint
    assert all(" and " in f.message and "overlap by 256 bytes" in f.message for f in overlaps[:-1])


def test_the_total_is_every_pair_whose_bytes_meet_and_few_pairs_are_all_listed():
    residents = (Resident("a", 0, 10, 1), Resident("b", 5, 10, 1), Resident("c", 9, 1, 1),
                 Resident("d", 20, 4, 1), Resident("e", 0, 0, 1))
    meet = lambda r, s: set(range(r.address, r.address + r.size)) & set(range(s.address, s.address + s.size))  # noqa: E731
    expected = [(i, j) for i in range(5) for j in range(i + 1, 5) if meet(residents[i], residents[j])]
    assert overlaps_found(residents) == (expected, len(expected))
    assert overlaps_found(residents, 1) == (expected[:1], len(expected))
    assert [f.kind for f in check_residents(dataclasses.replace(
        bob.bob_plan(), arena=dataclasses.replace(bob.bob_plan().arena, globals=residents)))].count("overlap") >= 3
