"""A plan host's Commands step (NvidiaPlanHostStepCommands): its NativePhysicalCommands
as a native physical program's canonical bytes, checked here as both hosts check them.

The commands are encoded by the plan language's own definition
(Runtime.NativePhysicalProgram.nativePhysicalCommandsBytes) and framed as a program
whose slots and state are the invocation's (COMMANDS_SLOTS, COMMANDS_STATE_BYTES: one
arena per invocation, zero at its start, shared by every Commands step).  A command that
needs what the plan host owns -- its files, its device session, its ring, peers -- is
refused by name here, before a host is written (docs/host-steps.md, "Commands inside a
plan host"); runtime_c/plan_commands.c and bobc.reference.host refuse it too.
"""
from __future__ import annotations

from ..errors import BobcError
from ..language.values import VBytes
from ..native import program as native
from ..resources import doc

COMMANDS_BYTES_DEFINITION = "Runtime.NativePhysicalProgram.nativePhysicalCommandsBytes"
COMMANDS_STATE_BYTES = 8192        # as a request's native state (nvidiaPlanHostStateExtent)
COMMANDS_SLOTS = 64
COMMANDS_IDENTITY = b"plan host commands"

# what a plan host keeps to itself (docs/host-steps.md): by command name
REFUSED = {
    "ReadFile": "the plan host owns its files (use Read steps)",
    "WriteFile": "the plan host owns its files (use Write steps)",
    "WriteMappedFile": "the plan host owns its files (use Write steps)",
    "OpenDevice": "the plan host owns its device session",
    "Map": "the plan host maps its layout's buffers itself",
    "Release": "the plan host owns its device session",
    "Submit": "the plan host owns its ring (use Submit or Reissue steps)",
    "Connect": "a plan host has no peers",
    "Send": "a plan host has no peers",
    "Receive": "a plan host has no peers",
    # a request program's own (docs/native-host.md, "Requests"): a plan host's request is its own
    **{name: "the plan host owns its request and files (use Read and Write steps)"
       for name in ("RequestOpen", "RequestRead", "RequestWrite", "RequestWriteAt", "RequestAppendState",
                    "RequestAppendInput", "RequestAppendStatus", "RequestCheckpointBegin",
                    "RequestCheckpointPublish")},
    "LoadEmbedded": "the plan host loads its images itself",
}


def frame(commands_bytes: bytes) -> bytes:
    """The canonical program bytes of one Commands step (docs/platform.md's header)."""
    return (native.MAGIC + native.VERSION.to_bytes(4, "little") + COMMANDS_SLOTS.to_bytes(8, "little")
            + COMMANDS_STATE_BYTES.to_bytes(8, "little") + len(COMMANDS_IDENTITY).to_bytes(8, "little")
            + COMMANDS_IDENTITY + commands_bytes)


def refusal(program: native.Program) -> str | None:
    """Why a plan host will not run this program (the first refused command), or None."""
    refused = refused_command(program)
    return refused[1] if refused else None


def refused_command(program: native.Program) -> tuple[int, str] | None:
    """The first command a plan host will not run, and why (`refusal`'s words), or None."""
    for index, command in enumerate(program.commands):
        why = REFUSED.get(command.name)
        if why:
            return index, f"command {index} ({command.name}) is not carried out inside a plan host: {why}"
    return None


def program_bytes(language_program, value, where: str) -> bytes:
    """NativePhysicalCommands (a language value) -> the step's checked program bytes."""
    from ..native.writer import refuse_wide_naturals

    refuse_wide_naturals(language_program.force, raw_commands=value, prefix=f"{where}: the native commands are refused: ")
    encoder = language_program.definition(COMMANDS_BYTES_DEFINITION)
    encoded = language_program.apply(encoder.thunk, value)
    if not isinstance(encoded, VBytes):
        raise BobcError(f"{where}: {COMMANDS_BYTES_DEFINITION} gave no bytes")
    data = frame(bytes(encoded.value))
    try:
        decoded = native.decode(data)
    except native.ProgramError as error:
        from ..native.writer import command_written

        raise BobcError(f"{where}: the native commands are refused: {error}",
                        command_written(language_program.force, value, error.command, error.field, value),
                        hint="both hosts would refuse them too "
                             f"({doc('native-host.md')}, \"Checks before the first command\")") from None
    refused = refused_command(decoded)
    if refused:
        from ..native.writer import command_written

        index, why = refused
        raise BobcError(f"{where}: {why}", command_written(language_program.force, value, index, None, value),
                        hint=f"{doc('host-steps.md')}, \"Commands inside a plan host\"")
    return data
