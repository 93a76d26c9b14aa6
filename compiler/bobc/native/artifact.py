"""Where a native host's program and device images sit in its file (the twin of
runtime_c/native_host.c's find_self: same checks, same messages).

    host = interpreter | program | target (16) | CRC-32 (4) | program length (8) | b"NPHYPRG1"
    file = host [ | components (kind 4, identity 64, length 8, bytes) x 4 | kind 0 (4) |
                    host identity (64) | host length (8) | b"NPEMBED1" | components' offset (8) ]
"""
from __future__ import annotations

import zlib
from dataclasses import dataclass, field

TRAILER_MAGIC = b"NPHYPRG1"
TRAILER_BYTES = 36
EMBED_MAGIC = b"NPEMBED1"
EMBED_HEADER_BYTES = 76
EMBED_FOOTER_BYTES = EMBED_HEADER_BYTES + 16
DAMAGED_EXIT = 9


class DamagedHost(Exception):
    """The host file is damaged; the message is the host's."""

    exit_code = DAMAGED_EXIT


@dataclass
class HostFile:
    program: bytes
    target: str
    host_size: int
    components: list = field(default_factory=list)     # (kind, identity, bytes), kinds 1..4


def trailer(program_bytes: bytes, target_name: str) -> bytes:
    """What follows the interpreter in a host: the program and how to find and check it."""
    name = target_name.encode("ascii")
    if len(name) > 16:
        raise ValueError(f"target name {target_name} is longer than the host's 16-byte field")
    return (program_bytes + name.ljust(16, b"\0") + zlib.crc32(program_bytes).to_bytes(4, "little")
            + len(program_bytes).to_bytes(8, "little") + TRAILER_MAGIC)


def _le(data: bytes, at: int, width: int = 8) -> int:
    return int.from_bytes(data[at:at + width], "little")


def split(data: bytes, path: str) -> HostFile:
    def damaged(what: str):
        raise DamagedHost(f"{path}: damaged host file: {what}; rebuild it (bobc build ... --entry ...)")

    size = len(data)
    host_size = size
    components = []
    if size >= EMBED_FOOTER_BYTES and data[size - 16:size - 8] == EMBED_MAGIC:
        header = size - EMBED_FOOTER_BYTES
        offset = _le(data, size - 8)
        if _le(data, header, 4) != 0 or _le(data, header + 68) != offset or offset > size - EMBED_FOOTER_BYTES:
            damaged(f"the embedded artifact's footer does not match its host (offset {offset})")
        at, end, expected = offset, header, 1
        while at < end:
            if end - at < EMBED_HEADER_BYTES:
                damaged(f"component {expected} is cut short")
            kind, length = _le(data, at, 4), _le(data, at + 68)
            if kind != expected:
                damaged(f"component kind {kind} where kind {expected} belongs")
            if length > end - at - EMBED_HEADER_BYTES:
                damaged(f"component {kind}'s length {length} runs past the footer")
            start = at + EMBED_HEADER_BYTES
            components.append((kind, bytes(data[at + 4:at + 68]).rstrip(b"\0"), bytes(data[start:start + length])))
            at = start + length
            expected += 1
        if len(components) != 4:
            damaged(f"{len(components)} device image components, not 4")
        host_size = offset
    if host_size < TRAILER_BYTES or data[host_size - 8:host_size] != TRAILER_MAGIC:
        damaged(f'no native program trailer ("{TRAILER_MAGIC.decode()}") at the host\'s end')
    trailer = host_size - TRAILER_BYTES
    program_size = _le(data, trailer + 20)
    if program_size > host_size - TRAILER_BYTES:
        damaged(f"the program's length {program_size} runs past the host's start")
    program = bytes(data[trailer - program_size:trailer])
    crc, said = zlib.crc32(program), _le(data, trailer + 16, 4)
    if crc != said:
        damaged(f"the program's CRC-32 is 0x{crc:08x}, its trailer says 0x{said:08x}")
    target = bytes(data[trailer:trailer + 16]).split(b"\0")[0].decode("ascii", "replace")
    return HostFile(program, target, host_size, components)


def interpreter_size(host: HostFile) -> int:
    """Where the interpreter ends: the program starts there (what follows is program, trailer)."""
    return host.host_size - TRAILER_BYTES - len(host.program)


def with_interpreter(data: bytes, host: HostFile, interpreter: bytes) -> bytes:
    """`data` (the file `host` was split from) with its interpreter replaced by `interpreter`: the
    program, its trailer and the embedded components byte for byte as they were, the footer's two
    host lengths (the host component's and the components' offset) moved by the difference."""
    start = interpreter_size(host)
    hosted = interpreter + data[start:host.host_size]
    if not host.components:
        return hosted
    size = len(data)
    header = size - EMBED_FOOTER_BYTES
    components = data[host.host_size:header]
    identity = data[header + 4:header + 68]
    return (hosted + components + (0).to_bytes(4, "little") + identity + len(hosted).to_bytes(8, "little")
            + EMBED_MAGIC + len(hosted).to_bytes(8, "little"))
