"""bobc.certify.host_steps._checkpoint_homes held to exact ranges (probe s40 mutants5).

Each test kills a mutant of _checkpoint_homes that tests/certify/test_checkpoint_homes_s40.py let
live.  The expected values follow from docs/host-steps.md ("Where a checkpoint is saved from"):
a publication takes payload byte p from where its Write/WriteAt of checkpoint-out reads it (a
Write at the payload's end so far, a WriteAt at its offset; a checkpoint's begin starts the
payload again), and a resume puts byte p where its checkpoint-in Read puts it; LinReg's payload is
32 bytes (its checkpoint contract), restored into `parameters`.
"""
from __future__ import annotations

import dataclasses

from bobc.plan.host import make_step

from .test_checkpoint_homes_s40 import GRADIENT, PARAMETERS, RESTORE, SAVE, homes, plan, spliced  # noqa: F401

BEGIN, PUBLISH = SAVE - 1, SAVE + 1


def test_a_second_publication_after_a_begin_is_held_to_its_own_save(plan):
    """begin, save from parameters, publish; begin, save from the gradient, publish: the second
    begin starts the payload at byte 0 again, so the second save's bytes [0, 32) come from the
    gradient and are refused."""
    steps = plan.host.steps
    again = spliced(plan, PUBLISH, steps[PUBLISH], steps[BEGIN], dataclasses.replace(steps[SAVE], host=GRADIENT),
                    steps[PUBLISH])
    [message] = homes(again)
    assert "step 14 (write) writes checkpoint payload bytes [0, 32)" in message


def test_a_write_after_writes_at_offsets_appends_at_the_furthest_end(plan):
    """WriteAt 16..31 then WriteAt 0..7 leave the payload's end at 32: a Write after them is past
    the payload (not byte 8), so where it reads from is no payload byte's home."""
    out = "checkpoint-out"
    tail = spliced(plan, SAVE, make_step("write_at", file=out, host=PARAMETERS + 16, extent=16, offset=16),
                   make_step("write_at", file=out, host=PARAMETERS, extent=8, offset=0),
                   make_step("write", file=out, host=GRADIENT, extent=8))
    assert homes(tail) == []


def test_a_range_past_the_payload_is_no_payload_byte(plan):
    """A 64-byte restore and save of a 32-byte payload, bytes 32..63 saved from the gradient: the
    checkpoint contract's payload is bytes [0, 32), so nothing is refused."""
    steps = plan.host.steps
    wide = spliced(plan, RESTORE, dataclasses.replace(steps[RESTORE], extent=64))
    wide = spliced(wide, SAVE, dataclasses.replace(steps[SAVE], extent=32),
                   dataclasses.replace(steps[SAVE], host=GRADIENT + 32, extent=32))
    assert homes(wide) == []


def test_the_refused_range_is_where_the_save_and_restore_meet(plan):
    """Restore payload [0, 16) into parameters and [16, 32) into parameters + 0x100 (homes of
    their own, not adjacent); save all 32 bytes from parameters: bytes [0, 16) are right, bytes
    [16, 32) are saved from parameters + 16 and restored into parameters + 0x100 -- the range
    named is [16, 32), and both addresses are the range's own (16 and 0x100 bytes in)."""
    read = plan.host.steps[RESTORE]
    chunked = spliced(plan, RESTORE, dataclasses.replace(read, extent=16),
                      dataclasses.replace(read, host=PARAMETERS + 0x100, extent=16, offset=16))
    [message] = homes(chunked)
    assert "step 12 (write) writes checkpoint payload bytes [16, 32) from " in message
    assert "(resident parameters at offset 16), but a resume reads those bytes" in message
    # parameters is 32 bytes (4 + 7 binary32), so + 0x100 lies past it, in the arena buffer
    assert "into [0x1100000100, 0x1100000110) (buffer arena at offset 256): a resume" in message
    assert f"read it back into the one this Write saves ({PARAMETERS + 16:#x})" in message
    assert f"checkpoint-in Read fills ({PARAMETERS + 0x100:#x})" in message


def test_a_save_adjacent_to_a_restore_range_is_compared_with_the_range_it_meets(plan):
    """Restore in two reads ([0, 16) into parameters, [16, 32) into parameters + 16); save [0, 16)
    from parameters and [16, 32) from the gradient + 16.  The second save only touches the first
    restore range at its end (an empty range): the one refused is [16, 32)."""
    read, write = plan.host.steps[RESTORE], plan.host.steps[SAVE]
    chunked = spliced(plan, RESTORE, dataclasses.replace(read, extent=16),
                      dataclasses.replace(read, host=PARAMETERS + 16, extent=16, offset=16))
    halves = spliced(chunked, SAVE + 1, dataclasses.replace(write, extent=16),
                     dataclasses.replace(write, host=GRADIENT + 16, extent=16))
    [message] = homes(halves)
    assert "step 13 (write) writes checkpoint payload bytes [16, 32)" in message


def test_a_zero_byte_restore_read_gives_no_home(plan):
    """A checkpoint-in Read of 0 bytes into parameters + 16 restores nothing: it does not make
    the restore look staged (two reads into one area), so a save from the gradient is still
    refused."""
    read = plan.host.steps[RESTORE]
    empty = spliced(plan, RESTORE, read, dataclasses.replace(read, host=PARAMETERS + 16, extent=0, offset=16))
    wrong = spliced(empty, SAVE + 1, dataclasses.replace(plan.host.steps[SAVE], host=GRADIENT))
    [message] = homes(wrong)
    assert "step 12 (write) writes checkpoint payload bytes [0, 32)" in message


def test_one_wrong_save_published_twice_is_named_once(plan):
    """begin, save 32 bytes from the gradient, publish, then an 8-byte Write (past the payload)
    and a second publish with no begin: both publications take [0, 32) from the same step, which
    is named once."""
    steps = plan.host.steps
    twice = spliced(plan, SAVE, dataclasses.replace(steps[SAVE], host=GRADIENT))
    twice = spliced(twice, PUBLISH, steps[PUBLISH], dataclasses.replace(steps[SAVE], extent=8), steps[PUBLISH])
    [message] = homes(twice)
    assert "step 11 (write) writes checkpoint payload bytes [0, 32)" in message


def test_a_publishing_loop_is_walked_into_its_second_iteration(plan):
    """begin, save from parameters, then repeat 2 {publish, begin, save from the gradient}: the
    first iteration publishes the right save; the second publishes the gradient's, which is
    refused (a loop that publishes is walked twice: every later iteration starts as the
    second)."""
    steps = plan.host.steps
    loop = make_step("repeat", count=2, body=(steps[PUBLISH], steps[BEGIN],
                                              dataclasses.replace(steps[SAVE], host=GRADIENT)))
    looped = spliced(plan, PUBLISH, loop)
    [message] = homes(looped)
    assert "step 12's body: step 2 (write) writes checkpoint payload bytes [0, 32)" in message
