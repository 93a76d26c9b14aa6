"""A native physical program's canonical bytes, decoded and checked (docs/platform.md).

The twin of runtime_c/native_program.c: the same command table, the same checks in the
same order, the same messages, so the reference runner and the C host refuse a program
alike, and `bobc build` refuses one before writing a host that would.  Commands are
numbered in the order their codes appear in the bytes (a repeat's body before its tail).
"""
from __future__ import annotations

from dataclasses import dataclass, field

from .words import count as _count

MAGIC = b"NPHY"
VERSION = 1
MAX_COMMANDS = 1 << 24
MAX_SLOTS = 1 << 20
MAX_STATE = 1 << 32
# Repeats nested one in another's body (runtime_c/native_program.h NP_MAX_REPEAT_NESTING): the
# C host's np_run and the reference's runner recurse once per body (docs/limits.md)
MAX_REPEAT_NESTING = 64
# a Submit ring's entries (NP_MAX_RING_ENTRIES): its put index (n + 1) mod entries is a 32-bit word
MAX_RING_ENTRIES = 1 << 32
# the output files WriteFile and WriteMappedFile name (NP_MAX_OUTPUT_FILES: host_io.h's
# RT_IO_MAX_FILES, published together), a request program's three among them
MAX_OUTPUT_FILES = 8
# the bytes a ReadFile reads at most (NP_MAX_READ_BYTES): no input over 1 GiB is read
MAX_READ_BYTES = 1 << 30
REPEAT = 12
# what a refused Connect address should be (runtime_c/native_program.c NP_SOCKADDR_HELP, the twin)
SOCKADDR_HELP = (": 2, 0, the port (big-endian), the 4 octets, 8 zero bytes; build it with linuxIPv4SocketAddress "
                 "(Runtime.SocketAddress)")

# code -> (name, fields in encoding order, command fields that follow); docs/platform.md's table.
# n a natural (8 bytes), o an operand (kind byte + 8), b bytes (8-byte length + bytes),
# s an operation or conversion (1 byte).
CODES: dict[int, tuple[str, str, int]] = {
    0: ("End", "", 0), 1: ("Halt", "", 0), 2: ("Fail", "nb", 0), 3: ("Set", "no", 1),
    4: ("Store", "no", 1), 5: ("AddNatural", "noo", 1), 6: ("Float", "snoo", 1), 7: ("Convert", "sno", 1),
    8: ("CopyStateToMapped", "nnn", 1), 9: ("CopyMappedToState", "nnn", 1), 10: ("WriteMapped", "nno", 1),
    11: ("WaitMapped", "non", 1), 12: ("Repeat", "o", 2), 13: ("BranchZero", "o", 2),
    14: ("ReadFile", "nnn", 1), 15: ("WriteFile", "nnn", 1), 16: ("OpenDevice", "b", 1),
    17: ("Map", "bnnnn", 1), 18: ("LoadImage", "nb", 1), 19: ("Connect", "bnn", 1), 20: ("Send", "nnn", 1),
    21: ("Receive", "nnn", 1), 22: ("Telemetry", "nb", 1), 23: ("Release", "", 1),
    24: ("Submit", "nnnonn", 1), 25: ("WriteMappedFile", "nnn", 1),
    # a request's commands (docs/native-host.md, "Requests"): the request's bytes are
    # RequestOpen's one bytes field (bobc.native.request)
    26: ("RequestOpen", "bnn", 1), 27: ("RequestRead", "nnno", 1), 28: ("RequestWrite", "nnn", 1),
    29: ("RequestWriteAt", "nnnn", 1), 30: ("RequestAppendState", "nnn", 1), 31: ("RequestAppendInput", "noo", 1),
    32: ("RequestAppendStatus", "nn", 1), 33: ("RequestCheckpointBegin", "", 1),
    34: ("RequestCheckpointPublish", "n", 1), 35: ("LoadEmbedded", "nn", 1),
    # the first phase of publication (docs/platform.md): every output staged so far to its synced temporary
    36: ("PrepareOutputs", "", 1),
}
CODE_OF = {name: code for code, (name, _, _) in CODES.items()}
FILE_CODES = (14, 15, 25)


class ProgramError(Exception):
    """A program the host refuses; the message is the host's.  `command`: the index of the command
    refused (None when the refusal is not one command's); `field`: which of its constructor's fields
    holds the value refused, or a tuple of them (a range's address and count; None: the command as a
    whole), so a writer can say where it was written (bobc.native.writer.command_written)."""

    def __init__(self, message: str, command: int | None = None, field=None):
        super().__init__(message)
        self.command = command
        self.field = field


@dataclass
class Command:
    code: int
    sub: int = 0
    n: list = field(default_factory=list)          # naturals, in field order
    v: list = field(default_factory=list)          # operands (kind, value), in field order
    data: bytes = b""                              # the one bytes field
    child: list = field(default_factory=lambda: [0, 0])

    @property
    def name(self) -> str:
        return CODES[self.code][0]


@dataclass
class Program:
    slots: int
    state_extent: int
    identity: bytes
    commands: list
    arguments: int = 0        # 1 + the highest argument a file command names


def _le(data: bytes, at: int, width: int = 8) -> int:
    return int.from_bytes(data[at:at + width], "little")


def decode(data: bytes) -> Program:
    """The program in `data` (its canonical bytes and nothing after), checked."""
    size = len(data)
    if size < 32 or data[:4] != MAGIC:
        raise ProgramError('not a native physical program (no "NPHY" header)')
    version = _le(data, 4, 4)
    if version != VERSION:
        raise ProgramError(f"program version {version}; this host runs version {VERSION}")
    slots, extent, identity_length = _le(data, 8), _le(data, 16), _le(data, 24)
    if slots > MAX_SLOTS:
        raise ProgramError(f"{slots} slots, more than the {MAX_SLOTS} a host keeps")
    if extent > MAX_STATE:
        raise ProgramError(f"a {extent}-byte state, more than the {MAX_STATE} a host keeps")
    if identity_length > size - 32:
        raise ProgramError(f"the identity's length {identity_length} runs past the program's end")
    program = Program(slots, extent, bytes(data[32:32 + identity_length]), [])
    commands = program.commands
    at = 32 + identity_length
    # [command index, next child, its Repeat nesting] of commands missing children
    stack: list[list[int]] = []
    first = True
    while first or stack:
        if at >= size:
            # the fields still to come: each pending command's children not yet read (a Repeat's two)
            pending = sum(CODES[commands[index].code][2] - filled for index, filled, _ in stack)
            raise ProgramError(f"the program ends at byte {at} with {_count(pending, 'command field')} still to "
                               "come (cut short)")
        code = data[at]
        if code not in CODES:
            raise ProgramError(f"byte {at}: unknown command code {code} (command {len(commands)})")
        if len(commands) == MAX_COMMANDS:
            raise ProgramError(f"more than {MAX_COMMANDS} commands")
        index = len(commands)
        name, fields, children = CODES[code]
        command = Command(code)
        commands.append(command)
        start, at = at, at + 1
        for kind in fields:
            need = 1 if kind == "s" else 9 if kind == "o" else 8
            if size - at < need:
                raise ProgramError(f"byte {start}: command {index} ({name}) is cut short by the program's end")
            if kind == "s":
                command.sub = data[at]
                if command.sub > 3:
                    raise ProgramError(f"command {index} ({name}): operation {command.sub} is not 0-3")
                at += 1
            elif kind == "n":
                command.n.append(_le(data, at))
                at += 8
            elif kind == "o":
                operand_kind = data[at]
                if operand_kind > 3:
                    raise ProgramError(f"command {index} ({name}): operand kind {operand_kind} is not 0-3")
                command.v.append((operand_kind, _le(data, at + 1)))
                at += 9
            else:
                length = _le(data, at)
                at += 8
                if length > size - at:
                    raise ProgramError(f"byte {start}: command {index} ({name}) is cut short by the program's end")
                command.data = bytes(data[at:at + length])
                at += length
        # this command fills the innermost pending field: a Repeat's body (its child 0) is one
        # Repeat deeper than the Repeat, every other field as deep as its command
        nesting = 0
        if not first:
            top = stack[-1]
            commands[top[0]].child[top[1]] = index
            nesting = top[2] + (commands[top[0]].code == REPEAT and top[1] == 0)
            if top[1] == CODES[commands[top[0]].code][2] - 1:
                stack.pop()
            else:
                top[1] += 1
        first = False
        # the runners recurse once per Repeat body: a nesting past the bound is refused here
        if code == REPEAT and nesting + 1 > MAX_REPEAT_NESTING:
            raise ProgramError(f"command {index} (Repeat): Repeats nested {nesting + 1} deep (one in another's body), "
                               f"more than the {MAX_REPEAT_NESTING} a host runs; nest fewer", command=index)
        if children:
            stack.append([index, 0, nesting])
    if at != size:
        raise ProgramError(f"{_count(size - at, 'byte')} after the program's last command")
    for index, command in enumerate(commands):
        _check(program, index, command)
    _check_outputs(program)
    return program


def _check_outputs(p: Program) -> None:
    """At most MAX_OUTPUT_FILES distinct output arguments (a request's three among them), the
    command naming one too many refused (runtime_c/native_program.c check_outputs)."""
    request = bool(p.commands) and p.commands[0].code == 26
    room, named = MAX_OUTPUT_FILES - (3 if request else 0), []
    for index, command in enumerate(p.commands):
        if command.code not in (15, 25) or command.n[0] in named:
            continue
        if len(named) == room:
            beside = " beside a request's three (--checkpoint-out, --predictions, --result)" if request else ""
            raise ProgramError(f"command {index} ({command.name}): argument {command.n[0]} is output file "
                               f"{len(named) + 1}, more than the {room} a host publishes{beside}; write fewer files "
                               "(an argument written twice is one file)", command=index)
        named.append(command.n[0])


def _in_state(program: Program, address: int, count: int) -> bool:
    return address <= program.state_extent and count <= program.state_extent - address


def _check(p: Program, i: int, c: Command) -> None:
    name = c.name

    def refuse(what: str, field: int | None = None):
        raise ProgramError(f"command {i} ({name}): {what}", command=i, field=field)

    for kind, value in c.v:
        if kind == 1 and value >= p.slots:
            refuse(f"slot {value}, but the program has {_count(p.slots, 'slot')}")
        if kind == 2 and not _in_state(p, value, 8):
            refuse(f"the state word at {value} is outside the {p.state_extent}-byte state")

    def state_range(address: int, count: int, what: str, field):
        if not _in_state(p, address, count):
            refuse(f"{what} [{address}, +{count}) is outside the {p.state_extent}-byte state", field)

    def slot(index: int, field: int):
        if index >= p.slots:
            refuse(f"slot {index}, but the program has {_count(p.slots, 'slot')}", field)

    code, n = c.code, c.n
    if code == 2 and not 1 <= n[0] <= 255:
        refuse(f"status {n[0]} is not 1-255", field=0)
    elif code == 3:
        slot(n[0], 0)
    elif code in (4, 5, 6, 7):
        # Float and Convert: the operation's field first
        state_range(n[0], 8, "the destination word", 1 if code in (6, 7) else 0)
    elif code == 8:
        state_range(n[0], n[2], "the state range", (0, 2))
    elif code in (9, 14, 15):
        state_range(n[1], n[2], "the state range", (1, 2))
        # no file over 1 GiB is read: such a ReadFile refuses every file (native_program.c)
        if code == 14 and n[2] > MAX_READ_BYTES:
            refuse(f"it reads {n[2]} bytes, more than the {MAX_READ_BYTES} (1 GiB) an input file may hold; read a "
                   "file of at most that", field=2)
    elif code in (20, 21):
        slot(n[0], 0)
        state_range(n[1], n[2], "the state range", (1, 2))
    elif code == 10 and n[1] not in (1, 2, 4, 8):
        refuse(f"width {n[1]} is not 1, 2, 4 or 8", field=1)
    elif code == 16 and len(c.data) != 16:
        refuse(f"the GPU UUID has {_count(len(c.data), 'byte')}, not 16 (the UUID's raw bytes, not its text "
               "GPU-xxxxxxxx-...; 16 zero bytes for the first GPU)", field=0)
    elif code == 19:
        if len(c.data) != 16:
            refuse(f"the socket address has {_count(len(c.data), 'byte')}, not the 16 of a sockaddr_in (AF_INET)"
                   f"{SOCKADDR_HELP}", field=0)
        if c.data[0] != 2 or c.data[1] != 0:
            refuse(f"the socket address starts {c.data[0]:02x} {c.data[1]:02x}, not AF_INET's 02 00 (a sockaddr_in)"
                   f"{SOCKADDR_HELP}", field=0)
        slot(n[1], 2)
    elif code == 24:
        if n[1] == 0:
            refuse("a ring of 0 entries", field=1)
        # GPPut, (n + 1) mod entries, is a 32-bit word: a longer ring has puts it cannot hold
        if n[1] > MAX_RING_ENTRIES:
            refuse(f"a ring of {n[1]} entries, more than the {MAX_RING_ENTRIES} a 32-bit GPPut counts", field=1)
        state_range(n[4], 8, "the issue counter", 5)
    elif code == 26:
        if i != 0:
            refuse("a request is opened by the program's first command only")
        from .request import RequestError, parse_request
        try:
            parse_request(c.data)
        except RequestError as error:
            refuse(f"the request's bytes: {error}", field=0)
        state_range(n[0], 8, "the step word", 1)
        state_range(n[1], 8, "the predict word", 2)
    elif code == 35 and not 1 <= n[0] <= 4:
        refuse(f"kind {n[0]} is not an embedded device image (1 program, 2 QMD, 3 pushbuffer, 4 GPFIFO)", field=0)
    if 27 <= code <= 34:
        if not p.commands or p.commands[0].code != 26:
            refuse("no request is open (RequestOpen must be the program's first command)")
        if code == 27 and n[0] not in (1, 2):
            refuse(f"file {n[0]} is not the input (1) or the input checkpoint (2)")
        if code in (28, 29, 30, 31, 32) and n[0] not in (3, 4, 5):
            refuse(f"file {n[0]} is not an output (3 the checkpoint, 4 the predictions, 5 the result)")
        if code == 29:
            # offset and extent are immediates: a write past its output is refused before the first
            # command (native_program.c check_command; np_request_write refuses any write at run time)
            from .request import FILE_CHECKPOINT_OUT, FILE_PREDICTIONS, OUTPUT_LIMIT, RequestError, parse_request
            if n[0] == FILE_CHECKPOINT_OUT:
                try:
                    room = parse_request(p.commands[0].data).contract.payload_bytes
                except RequestError:
                    room = OUTPUT_LIMIT
                where = f"the contract's {room}-byte checkpoint payload"
            else:
                room = OUTPUT_LIMIT
                where = (f"the {room} bytes an output holds at most (file {n[0]}, the "
                         f"{'predictions' if n[0] == FILE_PREDICTIONS else 'result'})")
            if n[3] > room or n[2] > room - n[3]:
                refuse(f"it writes {_count(n[2], 'byte')} at offset {n[3]}, past {where}", field=3)
        if code == 30:
            state_range(n[1], n[2], "the state range", (1, 2))
        if code == 32:
            state_range(n[1], 8, "the issue counter", 1)
    if code in FILE_CODES:
        if n[0] >= 1 << 16:
            refuse(f"argument {n[0]} (at most 65535)")
        p.arguments = max(p.arguments, n[0] + 1)


# What a program names, read from its commands alone (`bobc inspect`, the host's usage line):
# helpers over a decoded Program, no decoding of their own.
READS, WRITES = 1, 2
USE_WORDS = {0: "unused", READS: "read", WRITES: "written", READS | WRITES: "read and written"}
# a request's files (RequestRead's 1-2, the outputs 3-5: docs/native-host.md, "Requests") by option
REQUEST_OPTIONS = {1: "--input", 2: "--checkpoint", 3: "--checkpoint-out", 4: "--predictions", 5: "--result"}


def argument_uses(program: Program) -> list:
    """Per file argument 0 .. arguments-1: READS (a ReadFile names it), WRITES (a WriteFile or
    WriteMappedFile does), both, or 0 (no command names it: an argument below the highest one)."""
    uses = [0] * program.arguments
    for command in program.commands:
        if command.code in FILE_CODES:
            uses[command.n[0]] |= READS if command.code == 14 else WRITES
    return uses


def usage_arguments(program: Program) -> str:
    """The host's usage refusal's argument list, "ARG0 (read) ARG1 (written) ..." (runtime_c/
    native_host.c prints the same)."""
    return " ".join(f"ARG{index} ({USE_WORDS[use]})" for index, use in enumerate(argument_uses(program)))


def request_uses(program: Program) -> dict:
    """A request program's files by option -> READS/WRITES: RequestOpen reads --input and, when
    given, --checkpoint, and publishes the three outputs; none for a program without a request."""
    if not any(command.code == 26 for command in program.commands):
        return {}
    return {option: READS if file in (1, 2) else WRITES for file, option in REQUEST_OPTIONS.items()}


def socket_address(data: bytes) -> tuple:
    """(IPv4 address text, port) of a Connect's 16-byte sockaddr_in (port and address in network order)."""
    return ".".join(str(b) for b in data[4:8]), int.from_bytes(data[2:4], "big")


def gpu_uuid_text(data: bytes) -> str:
    """An OpenDevice's 16 bytes as the driver writes a GPU UUID (nvidia-smi -L, runtime_c/nv_shim.c):
    GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx."""
    h = data.hex()
    return f"GPU-{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:32]}"


def peers(program: Program) -> list:
    """Each Connect, in command order: {command, address, port, listens, slot}."""
    out = []
    for index, command in enumerate(program.commands):
        if command.code == 19:
            address, port = socket_address(command.data)
            out.append({"command": index, "address": address, "port": port, "listens": command.n[0] != 0,
                        "slot": command.n[1]})
    return out


def devices(program: Program) -> list:
    """Each OpenDevice, in command order: {command, uuid, any}: `any` when its 16 bytes are zero
    (the first GPU the driver lists, docs/native-host.md)."""
    return [{"command": index, "uuid": gpu_uuid_text(command.data), "any": not any(command.data)}
            for index, command in enumerate(program.commands) if command.code == 16]


def repeats(program: Program) -> list:
    """Each Repeat, in command order: {command, count} (count None when its operand is not an
    immediate: a slot, argument or state word read as the program runs)."""
    return [{"command": index, "count": command.v[0][1] if command.v[0][0] == 0 else None}
            for index, command in enumerate(program.commands) if command.code == 12]


def command_counts(program: Program) -> dict:
    """How many commands of each name the program holds (its commands, not how often they run)."""
    counts: dict = {}
    for command in program.commands:
        counts[command.name] = counts.get(command.name, 0) + 1
    return counts
