"""A plan host's Commands step that reads mapped memory outside every buffer of the plan is refused
by the certifier at the step, saying what to write (session 45, leftovers7).

Before, only its mapped writes were judged (test_host_steps_machine_buffers.py): a CopyMappedToState,
a WaitMapped, or an operand read from a mapped word at an address no buffer holds was certified and
built, and every invocation stopped there with status 10 and the native host's advice "(Map one there
with a nonzero host address first)" -- which a plan host cannot follow: docs/host-steps.md, "Commands
inside a plan host", lists Map among the commands the plan host refuses by name (it owns its layout),
and says its mapped memory is the plan's buffers at their GPU addresses.

The addresses a Commands program reads are its commands' constants (bobc/native/program.py: a
CopyMappedToState's and WaitMapped's address naturals, an operand of kind 3 -- a mapped word), so
the refusal follows from the plan's layout alone; the expected ranges below are hand arithmetic
from LinReg's buffers.
"""
from __future__ import annotations

import pytest

from bobc.plan.commands import frame
from bobc.plan.host import make_step

from .test_host_steps_machine_buffers import buffer, host_faults, linreg, with_steps  # noqa: F401 (fixture)


def n(value: int) -> bytes:
    return value.to_bytes(8, "little")


def copy_mapped_to_state(address: int, count: int) -> bytes:
    """CopyMappedToState address state-offset 0 count, End (bobc/native/program.py code 9, "nnn")."""
    return frame(bytes([9]) + n(address) + n(0) + n(count) + bytes([0]))


def wait_mapped(address: int) -> bytes:
    """WaitMapped address (immediate 1) 10 ms, End (code 11, "non")."""
    return frame(bytes([11]) + n(address) + bytes([0]) + n(1) + n(10) + bytes([0]))


def store_from_mapped(address: int) -> bytes:
    """Store state word 0 <- the mapped word at address (code 4, "no"; operand kind 3), End."""
    return frame(bytes([4]) + n(0) + bytes([3]) + n(address) + bytes([0]))


HINT = ("a plan host's commands reach only the plan's buffers, each at its GPU address (Map is the plan "
        "host's own): give an address inside one of the layout's buffers, or add a buffer there to the "
        "plan's layout (docs/host-steps.md, \"Commands inside a plan host\")")


@pytest.mark.parametrize("program, what, count", [
    (copy_mapped_to_state, "command 0 (CopyMappedToState) reads", 16),
    (wait_mapped, "command 0 (WaitMapped) reads", 8),
    (store_from_mapped, "command 0 (Store) reads", 8),
])
def test_a_commands_read_outside_every_buffer_is_refused_at_the_step(linreg, program, what, count):
    plan, _ = linreg
    data = program(0x10) if program is not copy_mapped_to_state else program(0x10, 16)
    faults = host_faults(with_steps(plan, [make_step("commands", commands=data, at=None)]))
    assert [f.message for f in faults] == [
        f"the host's step 0 (commands) {what} [0x10, {0x10 + count:#x}) ({count} bytes), which lies in no "
        f"buffer the plan maps: every invocation would stop there (status 10)"]
    assert faults[0].hint == HINT


def test_a_read_that_runs_past_its_buffer_is_refused_and_one_inside_it_is_not(linreg):
    plan, _ = linreg
    arena = buffer(plan, "arena")
    end = arena.gpu + arena.extent
    inside = host_faults(with_steps(plan, [make_step("commands", commands=copy_mapped_to_state(end - 16, 16),
                                                     at=None)]))
    assert inside == []
    past = host_faults(with_steps(plan, [make_step("commands", commands=copy_mapped_to_state(end - 8, 16),
                                                   at=None)]))
    assert len(past) == 1 and f"reads [{end - 8:#x}, {end + 8:#x}) (16 bytes), which lies in no buffer" \
        in past[0].message
    # a machine buffer may be read (docs/host-steps.md: steps that only read may read any buffer)
    semaphores = buffer(plan, "semaphores")
    assert host_faults(with_steps(plan, [make_step("commands", commands=wait_mapped(semaphores.gpu),
                                                   at=None)])) == []


def test_a_write_outside_every_buffer_now_says_what_to_write_too(linreg):
    from .test_host_steps_machine_buffers import _write_mapped
    plan, _ = linreg
    nowhere = host_faults(with_steps(plan, [make_step("commands", commands=_write_mapped(0x10, 4), at=None)]))
    assert len(nowhere) == 1 and nowhere[0].hint == HINT
