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
    refuse_unmapped_ranges(program, at)
    return host_interpreter(target_name) + trailer(program_bytes, target_name)


def refuse_unmapped_ranges(program, at=lambda command, field=None: None, prefix="the native physical program is "
                           "refused: ", exit_code=None) -> None:
    """A command whose mapped range lies in no buffer the program's Maps map (certify.native_mapped): every
    run would stop there, status 10, so no build makes that host; refused at the field the plan wrote."""
    from ..certify.native_mapped import unmapped_range

    found = unmapped_range(program)
    if found is None:
        return
    message, command, field = found
    error = BobcError(prefix + message, at(command, field),
                      hint=f"a mapped range lies whole in one buffer a Map maps in the process "
                           f"({doc('native-host.md')}, \"Checks before the first command\")")
    if exit_code is not None:
        error.exit_code = exit_code
    raise error


def command_written(force, raw_commands, command, field=None, *outer):
    """Where the plan wrote command `command` of the NativePhysicalCommands `raw_commands` (a
    value as a constructor holds it, unforced) -- commands numbered as the hosts number them, in
    the order their codes appear in the bytes (nativePhysicalCommandsBytes: a command, then its
    fields of the family, a Repeat's body before its tail) -- or its field `field` (the
    constructor's field index, or a tuple of them; None: the command): the first of the fields',
    the command's and the `outer` values' places that was written outside the library (a command
    a library helper rebuilt, as nativePhysicalSplice does, has only its fields' or an outer
    value's), as extraction names a value (bobc.plan.extract.written); None when none says."""
    from ..plan.extract import written

    if command is None:
        return written(*outer)
    for number, raw, value in _numbered_commands(force, raw_commands):
        if number == command:
            fields = () if field is None else field if isinstance(field, tuple) else (field,)
            own = [value.fields[index] for index in fields if index < len(value.fields)]
            return written(*own, raw, *outer)
    return written(*outer)


def _numbered_commands(force, raw_commands):
    """(number, raw, forced) for each command of the NativePhysicalCommands `raw_commands`, in the
    hosts' numbering: the order their codes appear in the bytes (a command, then its fields of the
    family, a Repeat's body before its tail)."""
    from ..language.values import VCon

    pending, number = [raw_commands], 0
    while pending:
        raw = pending.pop()
        value = force(raw)
        if not isinstance(value, VCon):
            return
        yield number, raw, value
        number += 1
        pending.extend(value.fields[index] for index in reversed(value.ctor.recursive))


# every natural of a program's bytes is 8 bytes little-endian (docs/platform.md), and
# `bytes-from-nat-le value 8` keeps its low 64 bits: only an Immediate operand's value is
# documented as taken mod 2^64 (the value a slot or word gets); every other natural -- an
# address, a byte count, a slot, a status, a request's fields -- must fit as it is written
NATURAL_BOUND = 1 << 64
COMMANDS_FAMILY = "NativePhysicalCommands"
IMMEDIATE = "NativePhysicalImmediate"


def natural_too_wide(force, raw_program=None, raw_commands=None):
    """The first natural of a native physical program (`raw_program`, a NativePhysicalProgram
    value as a constructor holds it, unforced) or of its commands alone (`raw_commands`) that its
    canonical bytes cannot hold -- 2^64 or more anywhere but an Immediate operand, where
    nativePhysicalProgramBytes would keep its low 64 bits and both hosts would run the wrapped
    value -- as (message, span): the message names the command (numbered as the hosts number
    them, command_written's order), the field and the value; the span is where the plan wrote
    the value, else its command, else the program.  None when every natural fits."""
    from ..certify.limits import shown
    from ..language.values import VCon, VNat
    from ..plan.extract import written

    def refused(what: str, value: int, places) -> tuple:
        return (f"{what} is {shown(value, commas=False)}, 2^64 or more: the program's bytes hold a natural in "
                f"64 bits, where it would wrap to {value % NATURAL_BOUND}", written(*places))

    def inside(raw, label: str, places):
        """The first too-wide natural in the value `raw` (a command's field; not a command)."""
        pending = [(raw, label, (raw, *places))]
        while pending:
            raw, label, places = pending.pop()
            value = force(raw)
            if isinstance(value, VNat):
                if value.value >= NATURAL_BOUND:
                    return refused(label, value.value, places)
            elif isinstance(value, VCon) and value.family != COMMANDS_FAMILY and value.constructor != IMMEDIATE:
                pending.extend((field, f"{label}'s {name}", (field, *places))
                               for name, field in reversed(list(zip(value.field_names, value.fields))))
        return None

    outer = ()
    if raw_program is not None:
        program = force(raw_program)
        outer = (raw_program,)
        if not isinstance(program, VCon):
            return None
        for name, field in zip(program.field_names, program.fields):
            value = force(field)
            if isinstance(value, VCon) and value.family == COMMANDS_FAMILY:
                raw_commands = field
            else:
                found = inside(field, f"the program's {name}", outer)
                if found:
                    return found
    if raw_commands is None:
        return None
    for number, raw, command in _numbered_commands(force, raw_commands):
        name = command.constructor
        shown_name = name[len("NativePhysical"):] if name.startswith("NativePhysical") else name
        for index, (field_name, field) in enumerate(zip(command.field_names, command.fields)):
            if index in command.ctor.recursive:
                continue
            found = inside(field, f"command {number} ({shown_name}): {field_name}", (raw, *outer))
            if found:
                return found
    return None


def refuse_wide_naturals(force, raw_program=None, raw_commands=None, prefix="the native physical program is "
                         "refused: ", exit_code=None) -> None:
    """natural_too_wide's finding as a BobcError (`prefix` before it), at the value's place."""
    found = natural_too_wide(force, raw_program, raw_commands)
    if found is None:
        return
    message, span = found
    error = BobcError(prefix + message, span,
                      hint="give it a value below 2^64 (18446744073709551616); only an Immediate operand is taken "
                           f"mod 2^64 ({doc('platform.md')}, \"Runtime.NativePhysicalProgram\")")
    if exit_code is not None:
        error.exit_code = exit_code
    raise error


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


def refuse_request_schedule(program, value) -> dict | None:
    """A plan host lowered to this program (nvidiaPlanHostRequestCommands, seed 004's host) whose
    schedule breaks a plan host's host-step rules (certify.request_schedule): refused as the plan
    host is, every fault at the step the plan wrote (docs/host-steps.md).  The request's arguments
    (request_call), else None: its staged restore is held once the images it runs are known
    (bobc.native.build.refuse_staged_request)."""
    from ..certify.findings import CertificationError
    from ..certify.request_schedule import request_call, request_findings

    call = request_call(value)
    if call is None:
        return None
    faults = request_findings(program, call)
    if faults:
        raise CertificationError(faults)
    return call


def encode_native_program(value, context):
    """The handler: a NativePhysicalProgram -> the host executable's bytes.  A request program's
    arguments are kept by its bytes (plan.intrinsics.encoded_request), for the staged rule."""
    call = refuse_request_schedule(context.program, value)
    refuse_wide_naturals(context.program.force, value)
    code = program_bytes_of(value, context)
    encoders = getattr(getattr(context.program, "bobc_intrinsics", None), "encoders", None)
    if call is not None and encoders is not None:
        import hashlib

        encoders.requests[hashlib.sha256(code).digest()] = call
    return VBytes(native_host(code, context.target.name, commands_written(context, value)))


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
    refuse_wide_naturals(program.force, native)
    return VBytes(native_host(program_bytes_of(native, context), context.target.name,
                              commands_written(context, native)))
