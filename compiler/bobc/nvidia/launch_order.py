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

from bisect import bisect_left, bisect_right
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


# Conflicts asked one by one before the footprints answer: a launch's first conflicting successor
# is nearly always within a few places, and so few leaves are nearly always waiting; past this the
# footprints (a `conflicts` that carries them, as bobc.certify.footprints.program_conflicts's does)
# answer in a logarithmic number of steps, so a submission of n launches that touch disjoint bytes
# costs about n log n rather than n^2 conflict tests and pairs remembered (probe s36 scale
# finding 5: 4,000 such launches took 1 GB).  So does a forking launch's search for the last spine
# launch it conflicts with (_Spines): a leaf beside a long chain that needs only its first launch
# asked the whole chain (probe s37 orderfuzz finding 2: 4,000 launches, 2 M tests and 205 MB).
# The answers are the same.
_ASKED = 32


class _Stamps:
    """Elementary pieces 0..size-1 of the bytes (between the sorted ends of the footprints'
    intervals), each holding the largest stamp painted over it (0: none): `paint` a range of
    pieces, ask the `largest` over a range.  A segment tree of maxima with tags."""

    def __init__(self, size: int):
        n = 1
        while n < size:
            n <<= 1
        self.n = n
        self.best = [0] * (2 * n)          # the largest stamp in a node's pieces, its ancestors' tags apart
        self.tag = [0] * (2 * n)           # a stamp painted over all of a node's pieces

    def paint(self, lo: int, hi: int, stamp: int) -> None:
        if lo >= hi:
            return
        best, tag = self.best, self.tag
        left, right = lo + self.n, hi + self.n
        while left < right:
            if left & 1:
                tag[left] = max(tag[left], stamp)
                best[left] = max(best[left], stamp)
                left += 1
            if right & 1:
                right -= 1
                tag[right] = max(tag[right], stamp)
                best[right] = max(best[right], stamp)
            left >>= 1
            right >>= 1
        for leaf in (lo + self.n, hi - 1 + self.n):     # every ancestor of a painted node holds a piece here
            node = leaf >> 1
            while node:
                best[node] = max(best[node], stamp)
                node >>= 1

    def largest(self, lo: int, hi: int) -> int:
        if lo >= hi:
            return 0
        best, tag = self.best, self.tag
        out = 0
        left, right = lo + self.n, hi + self.n
        while left < right:
            if left & 1:
                out = max(out, best[left])
                left += 1
            if right & 1:
                right -= 1
                out = max(out, best[right])
            left >>= 1
            right >>= 1
        for leaf in (lo + self.n, hi - 1 + self.n):     # tags over the nodes taken sit on these paths
            node = leaf >> 1
            while node:
                out = max(out, tag[node])
                node >>= 1
        return out


def _first_conflicts(prints: list) -> list[int | None]:
    """Per position: the first later position whose launch conflicts with it (None: none), by the
    footprints `prints` (one per position, None: unknown, conflicting with every launch): the
    positions from last to first, each asking which later one touches the bytes it writes or writes
    the bytes it touches (bobc.certify.footprints.Footprint.conflicts), then painting its own."""
    count = len(prints)
    ends = _ends(prints)

    def pieces(spans):
        return [(bisect_left(ends, a), bisect_left(ends, b)) for a, b in spans]
    writers, touchers = _Stamps(len(ends)), _Stamps(len(ends))      # stamp count - p: the earliest p
    first: list[int | None] = [None] * count
    unknown = None                     # the first later position with an unknown footprint
    for p in reversed(range(count)):
        fp = prints[p]
        if fp is None:
            first[p] = p + 1 if p + 1 < count else None
            unknown = p
            continue
        writes, touched = pieces(fp.writes), pieces(fp._touched.spans)
        stamp = max([touchers.largest(lo, hi) for lo, hi in writes]
                    + [writers.largest(lo, hi) for lo, hi in touched] + [0])
        found = count - stamp if stamp else None
        if unknown is not None and (found is None or unknown < found):
            found = unknown
        first[p] = found
        for lo, hi in writes:
            writers.paint(lo, hi, count - p)
        for lo, hi in touched:
            touchers.paint(lo, hi, count - p)
    return first


def _ends(prints: list) -> list[int]:
    """The sorted ends of the known footprints' intervals: the pieces _Stamps paints between."""
    return sorted({end for fp in prints if fp is not None
                   for spans in (fp.writes, fp._touched.spans) for span in spans for end in span})


class _Spines:
    """The spine launches of a submission's segments so far, by position, through their
    footprints: `last(p)` is the last of them whose launch conflicts with the launch at p (one
    writes bytes the other touches, or either footprint is unknown), in a logarithmic number of
    steps per interval.  Positions only grow, so the last one at or after a segment's first is
    the last spine launch of that segment that conflicts."""

    def __init__(self, prints: list):
        self.prints = prints
        self.ends = _ends(prints)
        self.writers, self.touchers = _Stamps(len(self.ends)), _Stamps(len(self.ends))   # stamp p + 1
        self.any = 0                       # 1 + the last spine position
        self.unknown = 0                   # 1 + the last spine position of an unknown footprint

    def _pieces(self, spans):
        return [(bisect_left(self.ends, a), bisect_left(self.ends, b)) for a, b in spans]

    def add(self, p: int) -> None:
        self.any = p + 1
        fp = self.prints[p]
        if fp is None:
            self.unknown = p + 1
            return
        for lo, hi in self._pieces(fp.writes):
            self.writers.paint(lo, hi, p + 1)
        for lo, hi in self._pieces(fp._touched.spans):
            self.touchers.paint(lo, hi, p + 1)

    def last(self, p: int) -> int | None:
        fp = self.prints[p]
        if fp is None:
            stamp = self.any
        else:
            stamp = max([self.touchers.largest(lo, hi) for lo, hi in self._pieces(fp.writes)]
                        + [self.writers.largest(lo, hi) for lo, hi in self._pieces(fp._touched.spans)]
                        + [self.unknown])
        return stamp - 1 if stamp else None


class _Union:
    """The bytes of a segment's leaves: the union of their writes and of what they touch (sorted,
    merged intervals), and whether one has an unknown footprint; whether a launch conflicts with
    any of them is then a bisection per interval of its own (as Footprint.conflicts)."""

    def __init__(self):
        self.unknown = False
        self.writes = ([], [])             # starts, ends
        self.touched = ([], [])

    @staticmethod
    def _add(into, spans) -> None:
        starts, ends = into
        for a, b in spans:
            i, j = bisect_left(ends, a), bisect_right(starts, b)
            if i < j:
                a, b = min(a, starts[i]), max(b, ends[j - 1])
            starts[i:j] = [a]
            ends[i:j] = [b]

    @staticmethod
    def _meets(into, spans) -> bool:
        starts, ends = into
        for a, b in spans:
            at = bisect_left(starts, b) - 1
            if at >= 0 and ends[at] > a:
                return True
        return False

    def add(self, fp) -> None:
        if fp is None:
            self.unknown = True
        else:
            self._add(self.writes, fp.writes)
            self._add(self.touched, fp._touched.spans)

    def conflicts(self, fp) -> bool:
        """Whether a launch of footprint `fp` conflicts with a leaf (there is one)."""
        return (self.unknown or fp is None or self._meets(self.touched, fp.writes)
                or self._meets(self.writes, fp._touched.spans))


def _forks(sequence: Sequence[int], conflicts: Conflicts, prints: list | None = None) -> list[bool]:
    """Per position: whether the launch there runs beside the spine (module docstring).  `prints`:
    the launches' footprints by position, where `conflicts` is their rule."""
    count = len(sequence)
    first = [None] * count
    later = []                         # positions whose first conflict is further than _ASKED on
    for p in range(count):
        end = count if prints is None else min(count, p + 1 + _ASKED)
        first[p] = next((q for q in range(p + 1, end) if conflicts(sequence[p], sequence[q])), None)
        if first[p] is None and end < count:
            later.append(p)
    if later:
        found = _first_conflicts(prints)
        for p in later:
            first[p] = found[p]
    eligible = [p + 1 < count and (first[p] is None or first[p] >= p + 2) for p in range(count)]
    gathered: dict[int, int] = {}
    for p in range(count):
        if eligible[p] and first[p] is not None:
            gathered[first[p]] = gathered.get(first[p], 0) + 1
    return [eligible[p] and (first[p] is None or gathered[first[p]] >= 2) for p in range(count)]


def _submission(sequence: Sequence[int], conflicts: Conflicts, forks: list[bool], pinned: set[int], slots: int,
                prints: list | None = None):
    """(sends, per position the positions its launch starts) of one submission.  `prints`: the
    launches' footprints by position, where `conflicts` is their rule."""
    sends: list[Send] = []
    children: dict[int, list] = {}             # position -> [spine child, side child] positions
    segment = None
    union = None                               # the segment's leaves' bytes, once they are many
    spines = None if prints is None else _Spines(prints)

    def open_segment(p: int):
        nonlocal segment, union
        sends.append(Send(sequence[p], after_idle=bool(sends)))
        segment = _Segment([p], [], {})
        union = None
        on_spine(p)

    def on_spine(p: int):
        if segment.spine[-1] != p:
            segment.spine.append(p)
        if spines is not None:
            spines.add(p)

    def last_on_spine(p: int) -> int | None:
        """The last spine position of the segment whose launch conflicts with p's (None: none):
        asked one by one for the last _ASKED, then through the footprints."""
        spine = segment.spine
        asked = spine if prints is None else spine[-_ASKED:] if _ASKED else []
        found = next((s for s in reversed(asked) if conflicts(sequence[s], sequence[p])), None)
        if found is not None or len(asked) == len(spine):
            return found
        last = spines.last(p)
        return last if last is not None and last >= spine[0] else None

    def add_leaf(p: int):
        segment.leaves.append(p)
        if union is not None:
            union.add(prints[p])

    def meets_a_leaf(p: int) -> bool:
        nonlocal union
        if prints is None or len(segment.leaves) <= _ASKED:
            return any(conflicts(sequence[q], sequence[p]) for q in segment.leaves)
        if union is None:
            union = _Union()
            for q in segment.leaves:
                union.add(prints[q])
        return union.conflicts(prints[p])

    for p, launch in enumerate(sequence):
        if segment is None or meets_a_leaf(p):
            open_segment(p)
            continue
        slot = 0
        if forks[p]:
            start = last_on_spine(p)
            if start is None:                  # conflicts with nothing since the wait: sent beside the spine
                sends.append(Send(launch, after_idle=False))
                add_leaf(p)
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
            add_leaf(p)
        else:
            on_spine(p)
    return sends, children


def launch_order(submissions: Sequence[Sequence[int]], conflicts: Conflicts | None = None,
                 slots: int = 2) -> LaunchOrder:
    """The dependents of every launch and each submission's sends (module docstring);
    `submissions` lists each submission's launch indices in plan order, `slots` is how many
    dependent QMDs a QMD names (with one, a launch forks only where the pushbuffer can send it).
    A `conflicts` that carries the launches' footprints (`.footprints`, launch -> Footprint or
    None, as bobc.certify.footprints.program_conflicts's) is their rule, which then also answers
    through them (_ASKED)."""
    footprints = getattr(conflicts, "footprints", None)
    conflicts = conflicts or _serial
    known: dict[tuple[int, int], bool] = {}

    def cached(a: int, b: int) -> bool:
        key = (a, b) if a <= b else (b, a)
        if key not in known:
            known[key] = bool(conflicts(*key))
        return known[key]

    prints = [None if footprints is None else [footprints[launch] for launch in sequence]
              for sequence in submissions]
    forks = [_forks(sequence, cached, held) for sequence, held in zip(submissions, prints)]
    pinned: set[int] = set()
    while True:
        wanted: dict[int, set] = {}
        all_sends = []
        for sequence, fork, held in zip(submissions, forks, prints):
            sends, children = _submission(sequence, cached, fork, pinned, slots, held)
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
