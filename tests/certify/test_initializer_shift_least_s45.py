"""certify/limits.py bounds a SplitMix64 initializer's shift by the readers' rule, 1..63 (session 45,
leftovers7; left by s44 mutants10: the certifier accepted a shift of 0).

The expected bound comes from the two readers of the value and the document, not from limits.py:
runtime_c/native_request.c refuses `shift == 0 || shift > 63`, bobc/plan/extract.py refuses
`not 0 < shift < 64`, and docs/limits.md's initializer row says "1 .. 63".  A shift of 0 keeps the
whole 64-bit draw, which the C host then takes as an int64_t (rt_init_chunk): the top bit set reads
negative.  A zero initializer has no shift and is not judged by it.
"""
from __future__ import annotations

import dataclasses
from types import SimpleNamespace

from bobc.certify.limits import check_limits
from bobc.errors import Span
from bobc.plan.host import Initializer
from bobc.targets import SM86


@dataclasses.dataclass
class _Request:
    words: int = 0


def findings(*initializers):
    program = SimpleNamespace(launches=(), launch_count=0, submissions=(), submission_count=0, gpfifo_entries=1,
                              program_base=0, qmd_base=0, pushbuffer_base=0, semaphore_base=0, program_bytes=0,
                              qmd_table_bytes=0, region_alignment=256, at=None, architecture=SM86.sm,
                              compute_class=SM86.compute_class)
    host = SimpleNamespace(buffers=(), fills=(), initializers=initializers, steps=(), semaphore_stride=0,
                           forward_launches=0, request=_Request())
    return [f for f in check_limits(SimpleNamespace(program=program, host=host, checkpoint=None), SM86)
            if "shift" in f.message]


def test_a_shift_of_0_is_refused_at_the_shift_saying_what_to_give():
    at = Span("Plan.bob", 12, 30)
    found = findings(Initializer("splitmix64", b"seed", 0, 0, 1, at={"shift": at}))
    assert len(found) == 1, found
    assert "checkpoint chunk 0's initializer (splitmix64) shift is 0: outside 1..63" in found[0].message
    assert found[0].at == at
    assert "docs/limits.md" in found[0].message


def test_shifts_1_and_63_are_accepted_and_64_refused():
    assert findings(Initializer("splitmix64", b"s", 1, 0, 1), Initializer("splitmix64", b"s", 63, 0, 1)) == []
    found = findings(Initializer("splitmix64", b"s", 64, 0, 1))
    assert len(found) == 1 and "shift is 64: outside 1..63" in found[0].message


def test_a_zero_initializer_has_no_shift_to_judge():
    assert findings(Initializer("zero")) == []
