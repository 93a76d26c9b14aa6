"""Residents and windows: non-empty, aligned as declared, inside a window, pairwise disjoint."""
from __future__ import annotations

from ..errors import shown_plan_text
from ..plan.model import Plan, place
from .findings import Finding, describe, end, span


# overlapping pairs of one group (windows, residents) a refusal lists; past them one more finding
# says how many pairs overlap in all (docs/limits.md): 2,000 residents on the same bytes made
# 1,999,000 findings, 50 s and 2.8 GB before the refusal was printed (probe s44 extractscale)
SHOWN_OVERLAPS = 64


def overlapping_pairs(residents, shown: int | None = None) -> list[tuple[int, int]]:
    """Every pair (i, j), i < j, of `residents` that share a byte, in the order of i then j (as a
    loop over all pairs finds them); `shown`: at most that many of them (overlaps_found)."""
    return overlaps_found(residents, shown)[0]


def overlaps_found(residents, shown: int | None = None) -> tuple[list[tuple[int, int]], int]:
    """(pairs, total): the pairs (i, j), i < j, of `residents` that share a byte, in the order of i
    then j, and how many pairs share one in all.  A sweep over the residents by address, so the
    cost is the residents' sort and the pairs kept, not every pair (16,000 residents took 44 s in
    pairs); `shown` keeps only the first that many the sweep meets (by address, not every pair:
    n residents on the same bytes are n^2 / 2 pairs), and the total is counted, not listed.
    A resident without bytes shares none."""
    from heapq import heappop, heappush
    from itertools import islice

    open_: list[tuple[int, int]] = []            # (end, index) of the residents begun, not yet ended
    pairs: list[tuple[int, int]] = []
    total = 0
    for address, i in sorted((r.address, i) for i, r in enumerate(residents) if r.size > 0):
        while open_ and open_[0][0] <= address:
            heappop(open_)
        total += len(open_)
        room = len(open_) if shown is None else min(len(open_), shown - len(pairs))
        pairs += [(j, i) if j < i else (i, j) for _, j in islice(open_, room)]
        heappush(open_, (end(residents[i]), i))
    return sorted(pairs), total


def check_residents(plan: Plan) -> list[Finding]:
    arena = plan.arena
    out: list[Finding] = []
    for group, residents in (("window", arena.windows), ("resident", arena.globals)):
        for r in residents:
            if r.size <= 0:
                out.append(Finding("empty", f"{group} {shown_plan_text(r.name)} at {r.address:#x} has no bytes ({r.size})",
                                   place(r, "size")))
            if r.alignment <= 0 or r.alignment & (r.alignment - 1):
                out.append(Finding("misaligned", f"{group} {shown_plan_text(r.name)} declares alignment {r.alignment}: an "
                                                 f"alignment is a power of two (1, 2, 4, ..., 256, ...)",
                                   place(r, "alignment")))
            elif r.address % r.alignment:
                out.append(Finding("misaligned", f"{group} {shown_plan_text(r.name)} at {r.address:#x} is not aligned to "
                                                 f"{r.alignment} bytes (it is {r.address % r.alignment} past)",
                                   place(r, "address")))
        pairs, total = overlaps_found(residents, SHOWN_OVERLAPS)
        for i, j in pairs:
            a, b = residents[i], residents[j]
            low, high = max(a.address, b.address), min(end(a), end(b))
            # the one that starts inside the other is where it was placed wrong, most likely
            later = b if b.address >= a.address else a
            out.append(Finding("overlap", f"{group}s {describe(a)} and {describe(b)} overlap by "
                                          f"{high - low} bytes at {span(low, high - low)}",
                               place(later, "address")))
        if total > len(pairs):
            out.append(Finding("overlap", f"{group}s overlap in {total - len(pairs):,} more pairs than the "
                                          f"{len(pairs)} listed ({total:,} pairs in all)",
                               place(later, "address"),
                               f"place each {group} on bytes of its own (the listed pairs are the first "
                               f"{SHOWN_OVERLAPS} met in address order)"))
    seen: dict[str, object] = {}
    for r in arena.globals:
        if r.name in seen:
            out.append(Finding("resident-name", f"residents {describe(seen[r.name])} and {describe(r)} share the "
                                                f"name {shown_plan_text(r.name)}: phases and messages name a resident, so "
                                                "give each its own", place(r, "name")))
        seen.setdefault(r.name, r)
    for phase in arena.phases:
        for access, listed in (("reads", phase.reads), ("writes", phase.writes)):
            for r in listed:
                known = seen.get(r.name)
                if known is None:
                    out.append(Finding("phase", f"phase {shown_plan_text(phase.identity)} {access} {describe(r)}, which is no "
                                                f"resident of the arena: list the arena's own residents",
                                       place(r)))
                elif (known.address, known.size) != (r.address, r.size):
                    out.append(Finding("phase", f"phase {shown_plan_text(phase.identity)} {access} {describe(r)}, but the arena's "
                                                f"resident {shown_plan_text(r.name)} is {describe(known)}: list the arena's own "
                                                f"resident", place(r)))
    for r in arena.globals:
        if not any(w.address <= r.address and end(r) <= end(w) for w in arena.windows):
            windows = ", ".join(describe(w) for w in arena.windows) or "none declared"
            out.append(Finding("outside-window", f"resident {describe(r)} lies outside every window "
                                                 f"(windows: {windows})", place(r, "address")))
    return out
