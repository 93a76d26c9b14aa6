"""The reference host's Commands step: native commands on the plan host's buffers.

The twin of runtime_c/plan_commands.c, built on the one reference interpreter of native
commands (bobc.reference.native_program.Machine): mapped memory is the plan's buffers by
GPU address, the state arena and slots are the invocation's (zero at its start, shared
by its Commands steps), and what the plan host owns (files, device session, ring, peers)
is refused by name.  Statuses and messages are the C host's, byte for byte.
"""
from __future__ import annotations

from ..native.program import Program, ProgramError, decode
from ..plan.commands import COMMANDS_IDENTITY, COMMANDS_SLOTS, COMMANDS_STATE_BYTES
from .native_program import EXIT_GPU_FAULT, EXIT_INTERNAL, Machine, Stop, _Halt, message_text

ERR_BYTES = 512          # runtime_c's RT_ERR_BYTES: a longer message is cut at 511 bytes


class CommandsStopped(Exception):
    """A Commands step ended the invocation: the host's exit status and its message."""

    def __init__(self, status: int, message: bytes):
        message = message[:ERR_BYTES - 1]
        super().__init__(message_text(message))
        self.status = status
        self.message = message


class PlanCommandsMachine(Machine):
    """One invocation's machine for its Commands steps."""

    def __init__(self, memory, stderr=None):
        """`memory`: the reference host's Memory (its (base, bytearray) buffers), or any
        `locate(address, count)` giving (sliceable bytes, offset) or None."""
        super().__init__(Program(COMMANDS_SLOTS, COMMANDS_STATE_BYTES, COMMANDS_IDENTITY, []), [], stderr=stderr)
        self._locate = memory if callable(memory) else self._buffers_of(memory)
        self.wait_status = EXIT_GPU_FAULT          # the plan host's codes (runtime_c/plan_commands.c)

    @staticmethod
    def _buffers_of(memory):
        def locate(address: int, count: int):
            for base, data in memory.buffers:
                if base <= address and address + count <= base + len(data):
                    return data, address - base
            return None
        return locate

    def locate(self, address: int, count: int):
        return self._locate(address, count)

    def _other(self, at: int, c) -> None:
        self.fault(at, EXIT_INTERNAL, f"{c.name} is not carried out inside a plan host (the plan host owns its "
                                      f"files, device session, ring and has no peers: docs/host-steps.md)")

    def run_step(self, data: bytes, step: int) -> None:
        """Carry out one step's program; CommandsStopped on a Fail or a fault."""
        try:
            program = decode(data)
        except ProgramError as error:
            raise CommandsStopped(EXIT_INTERNAL, f"step {step} (commands): its program: {error}; rebuild the "
                                                 f"host".encode()) from None
        if (program.slots, program.state_extent) != (len(self.slots), len(self.state)):
            raise CommandsStopped(EXIT_INTERNAL, f"step {step} (commands): {program.slots} slots and "
                                  f"{program.state_extent} state bytes, where the invocation's first Commands step "
                                  f"has {len(self.slots)} and {len(self.state)}; rebuild the host".encode())
        self.p = program
        try:
            self._run(0)
        except _Halt:
            pass
        except Stop as stop:
            raise CommandsStopped(stop.status, f"step {step} (commands): ".encode() + stop.message
                                  + b"; nothing was published") from None
