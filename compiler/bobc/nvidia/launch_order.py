"""Which QMD starts which: a submission's launches as chains the GPU follows by itself, with
launches that nothing needs soon forked beside them.

A plan lists each submission's launches in order, and each launch must see the writes of the
ones before it that it conflicts with (one writes bytes the other reads or writes).  The GPU
offers two ways to order two grids (docs/launch-order.md):

- a QMD names up to two dependent QMDs (DEPENDENT_QMD0/1), which the compute work distributor
  starts when its grid has ended and its writes are flushed;
- the pushbuffer's WAIT_FOR_IDLE holds every later send until all grids have ended.

Whatever the QMDs leave unordered (two dependents of one grid, two QMDs the pushbuffer sends
with no wait between them) may run at the same time.  So a submission becomes segments, each
opened by a WAIT_FOR_IDLE (none before the first): a *spine* -- the launches in plan order, each
the first dependent of the one before -- and *leaves*: a launch whose results no launch needs
before a later join (its first conflicting successor, which then opens a segment after a wait)
is started by the last spine launch it conflicts with (that launch's second dependent, or the
end of the side chain already hanging there), and runs beside the spine.  A launch that
conflicts with a leaf of its segment opens the next segment.

A leaf pays off only when its join gathers work: a launch forks when its first conflicting
successor is at least two places on (so that something runs beside it) and joins at least one
other fork (a wait costs about what the launch it frees gains), or when nothing after it in the
submission conflicts with it (the last launch never forks: nothing would run beside it).  With no footprints (`conflicts` None) every launch conflicts with
every other: each submission is one chain, the encoder's order before forks existed.

A QMD is one record shared by every submission that sends it, so a launch names dependents
only if every place that sends it wants the same ones; a launch where they differ is *pinned*
(names none) and what would follow it is sent by the pushbuffer after a wait, until the choice
is stable.  Chains cannot loop: a dependent always lies later in the submission that sends it.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Sequence

@dataclass(frozen=True)
class Send:
    """One QMD the pushbuffer sends: `launch`, after a WAIT_FOR_IDLE when `after_idle`."""
    launch: int
    after_idle: bool


@dataclass(frozen=True)
class LaunchOrder:
    dependents: dict[int, tuple[int, ...]]     # launch -> the launches its QMD starts when its grid ends
    sends: tuple[tuple[Send, ...], ...]        # per submission: what its pushbuffer segment sends

    def schedules(self, launch: int) -> tuple[int, ...]:
        return self.dependents.get(launch, ())


Conflicts = Callable[[int, int], bool]


def _serial(a: int, b: int) -> bool:
    return True


@dataclass
class _Segment:
    spine: list[int]                   # positions, in order
    leaves: list[int]
    side_tail: dict[int, int]          # spine position -> the last leaf of the side chain it starts


def _forks(sequence: Sequence[int], conflicts: Conflicts) -> list[bool]:
    """Per position: whether the launch there runs beside the spine (module docstring)."""
    count = len(sequence)
    first = [None] * count
    for p in range(count):
        first[p] = next((q for q in range(p + 1, count) if conflicts(sequence[p], sequence[q])), None)
    eligible = [p + 1 < count and (first[p] is None or first[p] >= p + 2) for p in range(count)]
    gathered: dict[int, int] = {}
    for p in range(count):
        if eligible[p] and first[p] is not None:
            gathered[first[p]] = gathered.get(first[p], 0) + 1
    return [eligible[p] and (first[p] is None or gathered[first[p]] >= 2) for p in range(count)]


def _submission(sequence: Sequence[int], conflicts: Conflicts, forks: list[bool], pinned: set[int], slots: int):
    """(sends, per position the positions its launch starts) of one submission."""
    sends: list[Send] = []
    children: dict[int, list] = {}             # position -> [spine child, side child] positions
    segment = None

    def open_segment(p: int):
        nonlocal segment
        sends.append(Send(sequence[p], after_idle=bool(sends)))
        segment = _Segment([p], [], {})

    for p, launch in enumerate(sequence):
        if segment is None or any(conflicts(sequence[q], launch) for q in segment.leaves):
            open_segment(p)
            continue
        slot = 0
        if forks[p]:
            start = next((s for s in reversed(segment.spine) if conflicts(sequence[s], launch)), None)
            if start is None:                  # conflicts with nothing since the wait: sent beside the spine
                sends.append(Send(launch, after_idle=False))
                segment.leaves.append(p)
                continue
            parent = segment.side_tail.get(start, start)
            slot = 1 if parent == start else 0
        fork = forks[p] and slot < slots
        if not fork:
            parent, slot = segment.spine[-1], 0
        if sequence[parent] in pinned:
            open_segment(p)
            continue
        children.setdefault(parent, [None, None])[slot] = p
        if fork:
            segment.side_tail[start] = p
            segment.leaves.append(p)
        else:
            segment.spine.append(p)
    return sends, children


def launch_order(submissions: Sequence[Sequence[int]], conflicts: Conflicts | None = None,
                 slots: int = 2) -> LaunchOrder:
    """The dependents of every launch and each submission's sends (module docstring);
    `submissions` lists each submission's launch indices in plan order, `slots` is how many
    dependent QMDs a QMD names (with one, a launch forks only where the pushbuffer can send it)."""
    conflicts = conflicts or _serial
    known: dict[tuple[int, int], bool] = {}

    def cached(a: int, b: int) -> bool:
        key = (a, b) if a <= b else (b, a)
        if key not in known:
            known[key] = bool(conflicts(*key))
        return known[key]

    forks = [_forks(sequence, cached) for sequence in submissions]
    pinned: set[int] = set()
    while True:
        wanted: dict[int, set] = {}
        all_sends = []
        for sequence, fork in zip(submissions, forks):
            sends, children = _submission(sequence, cached, fork, pinned, slots)
            all_sends.append(tuple(sends))
            for p, launch in enumerate(sequence):
                started = children.get(p, [None, None])
                wanted.setdefault(launch, set()).add(tuple(sequence[c] for c in started if c is not None))
        disagreeing = {launch for launch, options in wanted.items() if len(options) > 1} - pinned
        if not disagreeing:
            break
        pinned |= disagreeing
    dependents = {launch: next(iter(options)) for launch, options in sorted(wanted.items())
                  if launch not in pinned and next(iter(options))}
    return LaunchOrder(dependents, tuple(all_sends))
