"""Which QMD starts which (bobc.nvidia.launch_order): launches that nothing needs soon run
beside the chain, and every two launches that touch the same bytes (one writing) stay ordered.

Launches here are read/write sets of named buffers: a and b conflict when one writes a buffer
the other reads or writes, the rule bobc.certify.footprints applies to byte ranges."""
from __future__ import annotations

import random

import pytest

from bobc.nvidia.launch_order import Send, launch_order


def conflicts_of(touches):
    """touches: launch -> (reads, writes) -> the conflict rule on them."""
    def conflicts(a, b):
        (ra, wa), (rb, wb) = touches[a], touches[b]
        return bool(wa & (rb | wb) or wb & ra)
    return conflicts


def T(reads="", writes=""):
    return set(reads.split()), set(writes.split())


def ordered_everywhere(submissions, conflicts, order):
    """Run each submission as the GPU would and check that (1) every launch runs exactly once
    and (2) of two conflicting launches the later starts after the earlier ended: it descends
    from it through dependents, or a WAIT_FOR_IDLE was sent between them."""
    for index, sequence in enumerate(submissions):
        position = {launch: p for p, launch in enumerate(sequence)}
        segment, parent, ran = {}, {}, []
        waits = 0

        def start(launch, seg, by):
            segment[launch], parent[launch] = seg, by
            ran.append(launch)
            for child in order.schedules(launch):
                start(child, seg, launch)
        for send in order.sends[index]:
            waits += send.after_idle
            start(send.launch, waits, None)
        assert sorted(ran) == sorted(sequence), (index, ran, sequence)

        def ancestors(launch):
            while parent[launch] is not None:
                launch = parent[launch]
                yield launch
        for q, later in enumerate(sequence):
            for earlier in sequence[:q]:
                if conflicts(earlier, later):
                    assert segment[later] > segment[earlier] or earlier in set(ancestors(later)), \
                        (index, earlier, later, order)
                    assert position[earlier] < position[later]


BACKWARD = {          # a chain g -> h -> k with two leaves (w1, w2) that only the last launch needs
    0: T("", "g"), 1: T("g", "w1"), 2: T("g", "h"), 3: T("h", "w2"), 4: T("h", "k"), 5: T("w1 w2 k", "out")}


def test_leaves_run_beside_the_chain_and_join_after_a_wait():
    order = launch_order([list(BACKWARD)], conflicts_of(BACKWARD))
    assert order.dependents == {0: (2, 1), 2: (4, 3)}       # spine child first, then the leaf beside it
    assert order.sends == ((Send(0, False), Send(5, True)),)
    ordered_everywhere([list(BACKWARD)], conflicts_of(BACKWARD), order)


def test_with_one_dependent_slot_the_leaves_stay_on_the_chain():
    order = launch_order([list(BACKWARD)], conflicts_of(BACKWARD), slots=1)
    assert order.dependents == {p: (p + 1,) for p in range(5)}
    assert order.sends == ((Send(0, False),),)


def test_without_footprints_each_submission_is_one_chain():
    order = launch_order([[0, 1, 2, 3]])
    assert order.dependents == {0: (1,), 1: (2,), 2: (3,)}
    assert order.sends == ((Send(0, False),),)


def test_a_launch_that_conflicts_with_nothing_since_the_wait_is_sent_beside_the_chain():
    touches = {0: T("", "x"), 1: T("", "y"), 2: T("", "z"), 3: T("x y z", "out")}
    order = launch_order([[0, 1, 2, 3]], conflicts_of(touches))
    assert order.dependents == {0: (2,)}
    assert order.sends == ((Send(0, False), Send(1, False), Send(3, True)),)
    ordered_everywhere([[0, 1, 2, 3]], conflicts_of(touches), order)


def test_a_lone_fork_is_not_worth_a_wait():
    """1's results are needed three launches on, but nothing else joins there: it stays on the chain."""
    touches = {0: T("", "g"), 1: T("g", "w"), 2: T("g", "h"), 3: T("h w", "out")}
    order = launch_order([[0, 1, 2, 3]], conflicts_of(touches))
    assert order.dependents == {0: (1,), 1: (2,), 2: (3,)}


def test_the_next_launch_needing_it_keeps_a_launch_on_the_chain():
    touches = {0: T("", "g"), 1: T("g", "h"), 2: T("h", "k")}
    assert launch_order([[0, 1, 2]], conflicts_of(touches)).dependents == {0: (1,), 1: (2,)}


def test_a_launch_sent_by_two_submissions_names_dependents_only_where_they_agree():
    """Launch 2 is followed by 3 in one submission and ends the other: its QMD names nothing,
    and 3 is sent after a wait."""
    touches = {0: T("", "a"), 1: T("a", "b"), 2: T("b", "c"), 3: T("c", "d")}
    submissions = [[0, 1, 2, 3], [1, 2]]
    order = launch_order(submissions, conflicts_of(touches))
    assert order.dependents == {0: (1,), 1: (2,)}
    assert order.sends == ((Send(0, False), Send(3, True)), (Send(1, False),))
    ordered_everywhere(submissions, conflicts_of(touches), order)


def random_program(seed: int):
    """(submissions, touches) of a random program: up to 24 launches reading and writing up to 9
    buffers, the whole run as the first submission and up to three runs of the same launches."""
    rng = random.Random(seed)
    buffers = [f"b{i}" for i in range(rng.randint(3, 9))]
    count = rng.randint(1, 24)
    touches = {launch: (set(rng.sample(buffers, rng.randint(0, 3))), set(rng.sample(buffers, rng.randint(0, 2))))
               for launch in range(count)}
    whole = list(range(count))
    submissions = [whole]
    for _ in range(rng.randint(0, 3)):               # other submissions: runs of the same launches
        start = rng.randrange(count)
        submissions.append(whole[start:rng.randint(start + 1, count)])
    return submissions, touches


@pytest.mark.parametrize("seed", range(60))
@pytest.mark.parametrize("slots", (1, 2))
def test_random_programs_stay_ordered(seed, slots):
    submissions, touches = random_program(seed)
    order = launch_order(submissions, conflicts_of(touches), slots)
    assert all(len(after) <= slots for after in order.dependents.values())
    ordered_everywhere(submissions, conflicts_of(touches), order)
    assert order == launch_order(submissions, conflicts_of(touches), slots)      # deterministic
