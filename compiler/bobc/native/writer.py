"""The writer behind `compiler-native-encode (family NativePhysicalProgram)`.

A native physical program becomes the interpreter executable followed by a trailer the
host finds at the end of its own file (runtime_c/native_host.c):

    interpreter | program bytes | target name (16, zero padded) | CRC-32 (4) | length (8) | b"NPHYPRG1"

The program bytes are `nativePhysicalProgramBytes program`, evaluated by the plan
language's own definition (Runtime.NativePhysicalProgram), so the host reads exactly the
canonical bytes docs/platform.md specifies.  The target is the build's (--target): the
GPU classes the host opens its device session with.  The interpreter carries the build's
facts as a plan host does, in a .bobc.version section (bobc.host.version.native_text: which
bobc and commit built it, target, compute class, driver branch), which `HOST --version`
prints.  Same program, same target, same interpreter, same bobc: the same bytes.
"""
from __future__ import annotations

from ..errors import BobcError
from ..language.values import VBytes
from ..resources import doc
from . import program as decoding
from .artifact import trailer

BYTES_DEFINITION = "Runtime.NativePhysicalProgram.nativePhysicalProgramBytes"


def native_host(program_bytes: bytes, target_name: str, where=None) -> bytes:
    """The host executable for a program's canonical bytes, checked as the host checks them.
    `where(command, field)`, when given, says where the plan wrote command `command` (its field
    `field`; None: the program as a whole): the span a refusal names (commands_written)."""
    def at(command, field=None):
        return where(command, field) if where is not None else None

    try:
        program = decoding.decode(program_bytes)
    except decoding.ProgramError as error:
        raise BobcError(f"the native physical program is refused: {error}", at(error.command, error.field),
                        hint="the host would refuse it too "
                             f"({doc('native-host.md')}, \"Checks before the first command\"); change the value "
                             "the plan gives it") from None
    _check_request_checkpoint(program, at)
    return host_interpreter(target_name) + trailer(program_bytes, target_name)


def command_written(force, raw_commands, command, field=None, *outer):
    """Where the plan wrote command `command` of the NativePhysicalCommands `raw_commands` (a
    value as a constructor holds it, unforced) -- commands numbered as the hosts number them, in
    the order their codes appear in the bytes (nativePhysicalCommandsBytes: a command, then its
    fields of the family, a Repeat's body before its tail) -- or its field `field` (the
    constructor's field index, or a tuple of them; None: the command): the first of the fields',
    the command's and the `outer` values' places that was written outside the library (a command
    a library helper rebuilt, as nativePhysicalSplice does, has only its fields' or an outer
    value's), as extraction names a value (bobc.plan.extract.written); None when none says."""
    from ..language.values import VCon
    from ..plan.extract import written

    if command is None:
        return written(*outer)
    pending, number = [raw_commands], 0
    while pending:
        raw = pending.pop()
        value = force(raw)
        if not isinstance(value, VCon):
            break
        if number == command:
            fields = () if field is None else field if isinstance(field, tuple) else (field,)
            own = [value.fields[index] for index in fields if index < len(value.fields)]
            return written(*own, raw, *outer)
        number += 1
        pending.extend(value.fields[index] for index in reversed(value.ctor.recursive))
    return written(*outer)


def commands_written(context, raw_program):
    """native_host's `where` for the NativePhysicalProgram `raw_program` (unforced, as the handler
    receives it): command_written over its commands, the program's own place after them."""
    from ..language.values import VCon
    from ..plan.extract import written

    def where(command, field):
        force = context.program.force
        top = force(raw_program)
        if not isinstance(top, VCon) or not top.fields:
            return written(raw_program)
        # NativePhysicalProgramValue's last field: its commands
        return command_written(force, top.fields[-1], command, field, raw_program)

    return where


_VERSIONED: dict = {}


def host_interpreter(target_name: str) -> bytes:
    """The interpreter as a host built for `target_name` starts: the cached executable
    (bobc.native.interpreter) with the build's facts added as its .bobc.version section, read
    by runtime_c/host_version.c as a plan host's is (`HOST --version`)."""
    import hashlib

    from ..errors import temporary_folder, write_temporary
    from ..host import sections, version
    from ..targets import target_named
    from .interpreter import interpreter_bytes

    interpreter = interpreter_bytes()
    text = version.native_text(target_named(target_name))
    key = (hashlib.sha256(interpreter).hexdigest(), text)
    if key not in _VERSIONED:
        with temporary_folder(prefix="bobc-native-host-") as folder:
            from pathlib import Path

            path = Path(folder) / "native-host"
            write_temporary(path, interpreter)
            sections.embed(path, {version.SECTION: text})
            if len(_VERSIONED) >= 4:        # a target or two of today's interpreter: kept few
                _VERSIONED.clear()
            _VERSIONED[key] = path.read_bytes()
    return _VERSIONED[key]


def _check_request_checkpoint(program, at=lambda command, field=None: None) -> None:
    """A request host (RequestOpen first) publishes checkpoints of its request's payload: held to
    the size a host reads back, as a plan host's contract is (certify.limits), so no build makes
    a host that cannot resume from its own checkpoint."""
    if not program.commands or program.commands[0].code != decoding.CODE_OF["RequestOpen"]:
        return
    from ..certify.limits import checkpoint_file_finding
    from .request import parse_request

    finding = checkpoint_file_finding(parse_request(program.commands[0].data).contract)
    if finding is not None:
        raise BobcError(f"the native program's request is refused: {finding.message}", at(0, 0),
                        hint="make the model's checkpoint payload smaller (fewer or narrower parameters)")


def program_bytes_of(value, context) -> bytes:
    """The canonical bytes of a NativePhysicalProgram value, through the language's own encoder."""
    program = context.program
    encoder = program.definition(BYTES_DEFINITION)
    encoded = program.apply(encoder.thunk, value)
    if not isinstance(encoded, VBytes):
        raise BobcError(f"{BYTES_DEFINITION} gave no bytes")
    return bytes(encoded.value)


def encode_native_program(value, context):
    """The handler: a NativePhysicalProgram -> the host executable's bytes."""
    return VBytes(native_host(program_bytes_of(value, context), context.target.name,
                              commands_written(context, value)))


ADMITS_DEFINITION = "Platform.Linux.Nvidia.ResourcePlan.nvidiaResourceAdmitsLayout"


def encode_resource_host(value, context):
    """The handler for `compiler-native-encode (family NvidiaResourceHost)` (Platform.Linux.
    Nvidia.ResourcePlan's nvidiaResourceELF, and any plan function built on it): the host of
    the resource host's program -- the program already maps the layout (nvidiaResourceMapCommands)
    -- after the plan's own check that the resources admit the layout.  The build's target, not
    the resources' ABI row, picks the classes the host opens its device with (as for plan hosts:
    an sm_86 plan runs on the H200 built for sm_90)."""
    from ..language.values import VNat

    program = context.program
    host = program.force(value)
    resources = program.field(host, "nvidiaResourceHostResources")
    layout = program.field(host, "nvidiaResourceHostLayout")
    admitted = program.apply(program.definition(ADMITS_DEFINITION).thunk, resources, layout)
    if not isinstance(admitted, VNat) or admitted.value != 1:
        identity = program.field(resources, "nvidiaResourceIdentity")
        raise BobcError(f"the resources {bytes(identity.value)!r} do not admit the host's layout "
                        f"(nvidiaResourceAdmitsLayout: a layout built for another driver interface)",
                        hint="build the layout with the resources' NvidiaPlanHostABI")
    native = host.fields[host.field_names.index("nvidiaResourceHostProgram")]     # unforced: where it was written
    return VBytes(native_host(program_bytes_of(native, context), context.target.name,
                              commands_written(context, native)))
