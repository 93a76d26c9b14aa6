"""The launch order as the encoded images say it, read back from their raw words (probe s37
orderfuzz): random plans on sm_86 and sm_90 are encoded with their launches' footprints, and an
oracle of its own -- not bobc.nvidia's decoders -- reads each submission's GPFIFO entry, its
pushbuffer methods (host class headers, clc56f.h: INC, NON_INC, IMMD, ONE_INC) and every QMD's
DEPENDENT_QMD and latch fields at open-gpu-doc's bit positions (clc7c0qmd.h V03_00, clcbc0qmd.h
V04_00).  It runs each submission as the GPU would and checks that

- every launch the submission lists runs exactly once, and nothing else (so no dependent
  pointer leads out of the submission), and the dependents never loop;
- every two launches whose declared byte ranges conflict (one writes a byte the other reads or
  writes; an unknown footprint conflicts with all) are ordered: the later descends from the
  earlier through dependent QMDs -- through a grid that starts its dependent early (PREEXIT)
  only where the dependent waits on the latch it arrives at and opens with ACQBULK -- or a
  WAIT_FOR_IDLE lies between them;
- a QMD that waits on a latch is started only by a QMD that arrives at it;
- sm_86's QMDs enable no second dependent, every WAIT_FOR_IDLE is followed by a send, and the
  same plan gives the same bytes."""
from __future__ import annotations

import random
from pathlib import Path

import pytest

from bobc.certify.footprints import Footprint
from bobc.nvidia import encode
from bobc.plan.model import Launch, ParameterPatch, Region, Submission, WholeProgramPlan
from bobc.sass import assemble_kernel
from bobc.targets import SM86, SM90

KERNEL = Path(__file__).resolve().parents[1] / "native" / "kernels" / "native-mask.sass"
CODE, QMD, PUSH, SEMAPHORE = 0x200000000, 0x200100000, 0x200200000, 0x200400000

# (high, low) bits, transcribed from open-gpu-doc's headers
DEPENDENTS = {     # per slot: ENABLE, ACTION, POINTER (QMD address >> 8)
    "V03_00": (((512, 512), (515, 513), (511, 480)),),
    "V04_00": (((368, 368), (371, 369), (479, 448)), ((373, 373), (376, 374), (511, 480))),
}
V03_DEPENDENT_QMD1_ENABLE = (517, 517)
V04_PRE_EXIT = ((1151, 1151), (1150, 1150))        # ENABLE_PROGRAM_PRE_EXIT, PRE_EXIT_AT_LAST_CTA_LAUNCH
V04_ARRIVE = ((28, 28), (1503, 1472))              # ARRIVE_AT_LATCH_VALID, _ID
V04_WAIT = ((29, 29), (1535, 1504))                # WAIT_ON_LATCH_VALID, _ID
WAIT_FOR_IDLE, SEND_PCAS_A, SEND_SIGNALING_PCAS2_B = 0x110, 0x2B4, 0x2C0      # compute class methods
SEM_EXECUTE, RELEASE_WFI = 0x6C, 1 << 20                                      # host class
COMPUTE = 1


def bits(raw: int, field) -> int:
    high, low = field
    return raw >> low & (1 << high - low + 1) - 1


_CODE = {}


def code(target, launched: bool) -> bytes:
    if (target.name, launched) not in _CODE:
        _CODE[target.name, launched] = bytes(assemble_kernel(KERNEL, target, launched=launched).code)
    return _CODE[target.name, launched]


def plan_of(target, count: int, submissions, prologue):
    """`count` launches of native-mask: those `prologue` marks from a region assembled with the
    target's launch prologue (ACQBULK first on sm_90), the others from one without."""
    codes = [code(target, True), code(target, False)]
    places = [0, -(-len(codes[0]) // 256) * 256]
    regions = (Region("mask-waits", codes[0], 24, 64, 0, places[0]),
               Region("mask-plain", codes[1], 24, 64, 0, places[1]))
    which = [0 if prologue[i] else 1 for i in range(count)]
    launches = tuple(Launch(regions[r].identity, r, CODE + places[r], (1, 1, 1), (64, 1, 1), 0x200,
                            (ParameterPatch(0x160 // 8, 0x300000000),)) for r in which)
    program = sum(-(-len(codes[r]) // 256) * 256 for r in set(which)) + 0x200 * count
    subs = tuple(Submission(f"s{i}", tuple(seq), 16 * i, counts) for i, (seq, counts) in enumerate(submissions))
    return WholeProgramPlan("program", 0x86, 0xC7C0, 0x806, CODE, QMD, PUSH, SEMAPHORE, 256, program, regions,
                            launches, count, target.qmd_record_bytes * count, subs, len(subs), len(subs))


def conflict(x, y) -> bool:
    """x, y: (reads, writes) byte ranges [a, b), or None (unknown)."""
    if x is None or y is None:
        return True

    def meets(one, other):
        return any(a < d and c < b for a, b in one for c, d in other)
    return meets(x[1], y[0] + y[1]) or meets(y[1], x[0] + x[1])


def rule_of(touches):
    """The conflict rule bobc's encoder is given: the launches' Footprints (as program_conflicts')."""
    prints = [None if t is None else Footprint(*t) for t in touches]

    def conflicts(a, b):
        x, y = prints[a], prints[b]
        return x is None or y is None or x.conflicts(y)
    conflicts.footprints = prints
    return conflicts


def methods(segment: bytes):
    """(subchannel, method, data) of each method of a pushbuffer segment."""
    words = [int.from_bytes(segment[i:i + 4], "little") for i in range(0, len(segment), 4)]
    out, i = [], 0
    while i < len(words):
        header = words[i]
        op, count, sub, method = header >> 29, header >> 16 & 0x1FFF, header >> 13 & 7, (header & 0xFFF) * 4
        i += 1
        if op == 4:                                      # IMMD_DATA_METHOD: the data in the count field
            out.append((sub, method, count))
            continue
        assert op in (1, 3, 5), f"sec op {op} in {header:#x}"
        for k in range(count):                           # INC, NON_INC, ONE_INC
            out.append((sub, method + 4 * (k if op == 1 else min(k, 1) if op == 5 else 0), words[i + k]))
        i += count
    return out


def check_images(target, touches, submissions, prologue):
    plan = plan_of(target, len(touches), submissions, prologue)
    built = encode.encode_images(plan, target, rule_of(touches))
    again = encode.encode_images(plan, target, rule_of(touches))
    assert (again.qmd, again.push, again.gpfifo) == (built.qmd, built.push, built.gpfifo)
    record, layout = target.qmd_record_bytes, target.qmd_layout
    at = {entry["qmd_address"]: entry["index"] for entry in built.manifest["launches"]}
    assert len(at) == len(touches) and all(QMD <= a < QMD + len(built.qmd) and a % 256 == 0 for a in at)
    qmds = {}
    for address, launch in at.items():
        raw = int.from_bytes(built.qmd[address - QMD:address - QMD + record], "little")
        dependents = []
        for enable, action, pointer in DEPENDENTS[layout]:
            if bits(raw, enable):
                assert bits(raw, action) in (1, 3)                  # SCHEDULE, INVALIDATE_COPY_SCHEDULE
                assert bits(raw, pointer) << 8 in at, f"launch {launch} names no launch's QMD"
                dependents.append(at[bits(raw, pointer) << 8])
        early = arrive = wait = None
        if layout == "V03_00":
            assert not bits(raw, V03_DEPENDENT_QMD1_ENABLE)
        else:
            early = any(bits(raw, f) for f in V04_PRE_EXIT)
            arrive = bits(raw, V04_ARRIVE[1]) if bits(raw, V04_ARRIVE[0]) else None
            wait = bits(raw, V04_WAIT[1]) if bits(raw, V04_WAIT[0]) else None
        qmds[launch] = (dependents, early, arrive, wait)
    acquires = {launch: target is SM90 and prologue[launch] for launch in range(len(touches))}
    for index, (sequence, _) in enumerate(submissions):
        low, high = (int.from_bytes(built.gpfifo[8 * index + k:8 * index + k + 4], "little") for k in (0, 4))
        start = (low & ~3 | (high & 0xFF) << 32) - PUSH
        runs = []                                        # (launch, segment, parent run)
        children: dict[int, list[int]] = {}

        def run(launch, segment, parent, depth=0):
            assert depth <= len(sequence), f"submission {index}: the dependent QMDs loop"
            me = len(runs)
            runs.append((launch, segment, parent))
            children[me] = [run(child, segment, me, depth + 1) for child in qmds[launch][0]]
            return me
        waits, queued, released = 0, None, False
        for sub, method, data in methods(built.push[start:start + 4 * (high >> 10 & 0x1FFFFF)]):
            assert not released
            if (sub, method) == (COMPUTE, WAIT_FOR_IDLE):
                waits += 1
            elif (sub, method) == (COMPUTE, SEND_PCAS_A):
                queued = data << 8
            elif (sub, method) == (COMPUTE, SEND_SIGNALING_PCAS2_B):
                run(at[queued], waits, None)
            elif method == SEM_EXECUTE:
                assert data & RELEASE_WFI
                released = True
        assert released
        assert {s for _, s, p in runs if p is None} == set(range(waits + 1)), "a wait sends nothing after it"
        assert sorted(launch for launch, _, _ in runs) == sorted(sequence), (index, runs, sequence)
        for launch, _, parent in runs:
            wait = qmds[launch][3]
            assert wait is None or (parent is not None and qmds[runs[parent][0]][2] == wait), \
                f"submission {index}: launch {launch} waits on latch {wait}, which the QMD starting it never arrives at"
        after = [set() for _ in runs]                    # the runs that start after run i has ended
        for i in reversed(range(len(runs))):
            parent_launch = runs[i][0]
            for child in children[i]:
                launch = runs[child][0]
                if not qmds[parent_launch][1] or (qmds[launch][3] is not None and
                                                  qmds[launch][3] == qmds[parent_launch][2] and acquires[launch]):
                    after[i] |= {child} | after[child]
            after[i] |= {j for j in range(len(runs)) if runs[j][1] > runs[i][1]}
        instances: dict[int, list[int]] = {}
        for i, (launch, _, _) in enumerate(runs):
            instances.setdefault(launch, []).append(i)
        for found in instances.values():                 # a launch sent twice: its runs in their order
            found.sort(key=lambda i: -sum(1 for j in found if j in after[i]))
        seen: dict[int, int] = {}
        place = []
        for launch in sequence:
            place.append(instances[launch][seen.get(launch, 0)])
            seen[launch] = seen.get(launch, 0) + 1
        for q in range(len(sequence)):
            for p in range(q):
                if conflict(touches[sequence[p]], touches[sequence[q]]):
                    assert place[q] in after[place[p]], \
                        f"submission {index}: launches {sequence[p]} and {sequence[q]} conflict but are not ordered"


def random_case(seed: int):
    """(touches, submissions, prologue): 2-13 launches; named 16-byte buffers read whole or in
    part and written in part, or random byte ranges; empty and unknown footprints; up to five
    submissions that are subsets of the launches in plan order (so a launch follows different
    launches in different submissions), some sending a launch twice, some counting."""
    rng = random.Random(seed)
    count = rng.randrange(2, 14)
    if rng.random() < 0.6:
        buffers = rng.randint(3, 10)

        def touch():
            if rng.random() < 0.04:
                return None
            reads = [(16 * b, 16 * b + rng.choice((4, 16, 24))) for b in rng.sample(range(buffers), rng.randint(0, 3))]
            writes = [(16 * b + rng.choice((0, 8)), 16 * b + 12) for b in rng.sample(range(buffers), rng.randint(0, 1))]
            return reads, writes
    else:
        span = rng.choice((8, 16, 64))

        def touch():
            if rng.random() < 0.05:
                return None
            spans = lambda k: [(a, a + rng.choice((1, 2, 4, 16, 64))) for a in (rng.randrange(span) for _ in range(k))]   # noqa: E731
            return spans(rng.randrange(0, 4)), spans(rng.randrange(0, 3))
    touches = [touch() for _ in range(count)]
    submissions = [(list(range(count)), False)] if rng.random() < 0.5 else []
    for _ in range(rng.randrange(1, 6)):
        sequence = sorted(rng.sample(range(count), rng.randint(1, count)))
        if rng.random() < 0.1:
            sequence += rng.sample(range(count), rng.randrange(1, 3))
        submissions.append((sequence, rng.random() < 0.3))
    return touches, submissions, [rng.random() < 0.9 for _ in range(count)]


@pytest.mark.parametrize("first", range(0, 400, 100))
@pytest.mark.parametrize("target", (SM86, SM90), ids=lambda t: t.name)
def test_the_images_order_every_conflicting_pair(target, first):
    for seed in range(first, first + 100):
        check_images(target, *random_case(seed))


def test_a_launch_two_qmds_start_waits_on_no_latch_one_of_them_never_arrives_at():
    """Probe s37 orderfuzz finding 1, as the oracle sees it: A = 0 and B = 1 both start C = 3
    (A alone, B beside X = 2); B's QMD arrives at no latch, so C may wait on none."""
    a, b, x, c, y = ([], [(0, 4)]), ([], [(16, 20)]), ([(16, 20)], [(32, 36)]), ([(0, 4)], [(48, 52)]), \
        ([(48, 52)], [(64, 68)])
    check_images(SM90, [a, b, x, c, y], [([0, 3, 4], False), ([1, 2, 3, 4], False)], [True] * 5)
