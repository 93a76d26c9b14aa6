"""A native physical program's mapped ranges, held to the buffers the program maps.

Every command of a native physical program (Runtime.NativePhysicalProgram) that reads or writes
mapped memory names its range by constants: an address field and a byte count (or a width, a
64-bit word, an image's length).  The hosts (runtime_c/native_machine.c, bobc.reference.
native_program) look each range up at run time among the buffers Map has mapped in the process
(a nonzero host address) and stop with status 10 when it lies in none of them whole.  A Map's
host range is a constant too, so a range that lies whole in no buffer any Map of the program maps
stops its command every time the command runs, whatever the order: a copy past its buffer's end,
a file written from more bytes than the buffer holds, a range spanning two buffers.  `bobc build`
(bobc.native.writer) and `bobc run --reference` refuse such a program before it runs, at the
command, naming the range and the buffer it starts in (docs/native-host.md, "Checks before the
first command").

Not checked here (the hosts check them at run time, status 10): the order (a range used before its
Map or after a Release), a Submit's ring slot (its index is the issue counter, a state word the
program may set) and a LoadEmbedded's range (its image's length is the host file's, not the
program's).
"""
from __future__ import annotations

# code -> ((address field, count field or a fixed byte count), ...): the constructor's field indices
# (encoding order, docs/platform.md's table); a count given as ("width", i) is field i's value
_FIXED = "fixed"
RANGES = {
    8: ((1, 2),),                       # CopyStateToMapped state mapped bytes
    9: ((0, 2),),                       # CopyMappedToState mapped state bytes
    10: ((0, 1),),                      # WriteMapped address width value
    11: ((0, (_FIXED, 8)),),            # WaitMapped address value timeout: the 64-bit word
    18: ((0, "image"),),                # LoadImage host image
    24: ((2, (_FIXED, 4)), (4, (_FIXED, 8))),   # Submit: GPPut's 32-bit word, the 64-bit semaphore
    25: ((1, 2),),                      # WriteMappedFile argument mapped bytes
    27: ((1, 2),),                      # RequestRead file mapped extent offset
    28: ((1, 2),),                      # RequestWrite file mapped extent
    29: ((1, 2),),                      # RequestWriteAt file mapped extent offset
}
MAP, MAPPED_WORD = 17, 3


def _naturals_and_operands(code: int) -> tuple[list[int], list[int]]:
    """The constructor field indices of a command's naturals and of its operands, in order."""
    from ..native.program import CODES

    kinds = CODES[code][1]
    return [i for i, k in enumerate(kinds) if k == "n"], [i for i, k in enumerate(kinds) if k == "o"]


def mapped_ranges(command) -> list[tuple[int, int, object, str]]:
    """(address, bytes, field, what) of each mapped range the decoded `command` names by constants:
    `field` the constructor field (or pair of fields) that wrote it, `what` how to name it."""
    naturals, operands = _naturals_and_operands(command.code)
    value = {field: command.n[j] for j, field in enumerate(naturals)}
    out = []
    for address_field, count in RANGES.get(command.code, ()):
        if count == "image":
            out.append((value[address_field], len(command.data), (address_field, 1), "the image"))
        elif isinstance(count, tuple):
            what = "GPPut's word" if command.code == 24 and address_field == 2 else \
                   "the semaphore" if command.code == 24 else "the word"
            out.append((value[address_field], count[1], address_field, what))
        else:
            out.append((value[address_field], value[count], (address_field, count), "the range"))
    for j, (kind, operand) in enumerate(command.v):
        if kind == MAPPED_WORD:
            out.append((operand, 8, operands[j], "the mapped word operand"))
    return out


def _maps(program) -> list[tuple[str, int, int]]:
    """(name, host, extent) of every buffer a Map of `program` maps in the process (a nonzero host)."""
    out = []
    for command in program.commands:
        if command.code == MAP:
            _gpu, host, extent, _video = command.n
            if host:
                out.append((command.data.decode("utf-8", "replace"), host, extent))
    return out


def _inside(address: int, count: int, host: int, extent: int) -> bool:
    # the hosts' own test (bobc.reference.native_program Machine.locate, native_machine.c np_locate)
    return address >= host and address - host <= extent and count <= extent - (address - host)


def unmapped_range(program):
    """The first command of the decoded `program` (in the hosts' numbering) that names a mapped range
    no buffer of the program's Maps holds whole, as (message, command index, field); None when every
    range lies in one."""
    maps = _maps(program)
    for index, command in enumerate(program.commands):
        for address, count, field, what in mapped_ranges(command):
            if any(_inside(address, count, host, extent) for _, host, extent in maps):
                continue
            start = next(((name, host, extent) for name, host, extent in maps
                          if host <= address < host + extent), None)
            if start is not None:
                name, host, extent = start
                end = host + extent
                into = next((other for other, low, size in maps if low <= end < low + size), None)
                where = (f"it starts {address - host:,} bytes into buffer \"{name}\" [0x{host:x}, +0x{extent:x}) and "
                         f"runs {address + count - end:,} bytes past its end"
                         + (f" (into buffer \"{into}\": a range lies in one buffer)" if into is not None else ""))
                advice = f"keep it inside \"{name}\" (or map a buffer large enough)"
                field = None        # an overrun: the address or the count may be wrong, so the command's place
            elif maps:
                where = "it starts in no buffer the program maps in the process"
                advice = "name an address inside a buffer a Map maps (a nonzero host address), or add that Map"
            else:
                where = "the program maps no buffer in the process (no Map with a nonzero host address)"
                advice = "Map the buffer it names first"
            return (f"command {index} ({command.name}): {what} [0x{address:x}, +{count}) lies in no buffer the program "
                    f"maps: {where}; every run would stop here, status 10; {advice}", index, field)
    return None
