"""Device images as named ELF sections of the host executable.

The host is linked first; the build then adds one non-loaded section per image
(written here from the ELF64 layout in elf.h: importing an ELF library cost a
build more than everything else it does), and the host reads its own sections
from /proc/self/exe at start.  Keeping the images out of the C source keeps the compile fast and
lets `bobc inspect` and regression tests read exactly what a node will run.
"""
from __future__ import annotations

import hashlib
import json
import os
import struct
from pathlib import Path

from ..errors import BobcError

PREFIX = ".bobc."


class HostImageError(BobcError):
    pass


# ELF64 little-endian, the hosts bobc builds (elf.h): header fields and section header layout
_EHDR = struct.Struct("<16sHHIQQQIHHHHHH")
_SHDR = struct.Struct("<IIQQQQIIQQ")
_SHT_PROGBITS = 1
_SHN_LORESERVE = 0xFF00
_ALIGN = 16


def _align(n: int, alignment: int) -> int:
    return (n + alignment - 1) // alignment * alignment


def _layout(data: bytes, executable: Path):
    """The header fields, the section headers and the section names of an ELF64 LE file."""
    if len(data) < _EHDR.size or data[:4] != b"\x7fELF" or data[4] != 2 or data[5] != 1:
        raise HostImageError(f"{executable} is not a 64-bit little-endian ELF file",
                             hint="pass a host built by `bobc build`")
    header = list(_EHDR.unpack_from(data))
    shoff, shentsize, shnum, shstrndx = header[6], header[11], header[12], header[13]
    if shentsize != _SHDR.size or not 0 < shstrndx < shnum < _SHN_LORESERVE or \
            shoff + shnum * _SHDR.size > len(data):
        raise HostImageError(f"{executable} has no usable section table")
    table = [list(_SHDR.unpack_from(data, shoff + i * _SHDR.size)) for i in range(shnum)]
    names = table[shstrndx]
    if names[4] + names[5] > len(data):
        raise HostImageError(f"{executable} has a section name table outside the file")
    return header, table, data[names[4]:names[4] + names[5]]


def _name(strings: bytes, offset: int) -> str:
    end = strings.find(b"\0", offset)
    return strings[offset:end if end >= 0 else len(strings)].decode("utf-8", "replace")


def embed(executable: Path, sections: dict[str, bytes]) -> None:
    """Add `sections` (name -> bytes) to `executable` in place, keeping it executable.

    Each becomes a non-loaded PROGBITS section (16-byte aligned) appended after the file's
    bytes, followed by a new section name table and a new section header table; nothing the
    loader reads moves.  The old section header table is dropped when it ends the file.
    """
    data = executable.read_bytes()
    header, table, strings = _layout(data, executable)
    existing = {_name(strings, entry[0]) for entry in table}
    out = bytearray(data)
    shoff, shnum, shstrndx = header[6], header[12], header[13]
    if shoff + shnum * _SHDR.size == len(out):
        del out[shoff:]
    strings = bytearray(strings)
    added = []
    for name, content in sections.items():
        full = PREFIX + name
        if full in existing:
            raise HostImageError(f"{executable} already has a section {full}")
        offset = _align(len(out), _ALIGN)
        out += bytes(offset - len(out)) + content
        added.append([len(strings), _SHT_PROGBITS, 0, 0, offset, len(content), 0, 0, _ALIGN, 0])
        strings += full.encode("utf-8") + b"\0"
    names = table[shstrndx]
    names[4], names[5] = len(out), len(strings)
    out += strings
    header[6] = _align(len(out), 8)
    out += bytes(header[6] - len(out))
    for entry in table + added:
        out += _SHDR.pack(*entry)
    header[12] = len(table) + len(added)
    out[:_EHDR.size] = _EHDR.pack(*header)
    temporary = executable.with_name(executable.name + ".sections")
    temporary.write_bytes(out)
    os.chmod(temporary, 0o755)
    os.replace(temporary, executable)


def spans(data: bytes, executable) -> dict[str, tuple[int, int]]:
    """The .bobc.* sections of a host's bytes, by short name: (file offset, size) as its section
    table says (SHT_NOBITS sections, which have no bytes, left out)."""
    _, table, strings = _layout(data, executable)
    return {_name(strings, entry[0])[len(PREFIX):]: (entry[4], entry[5]) for entry in table
            if _name(strings, entry[0]).startswith(PREFIX) and entry[1] != 8}


def read(executable: Path) -> dict[str, bytes]:
    """The .bobc.* sections of a built host, by short name."""
    try:
        data = Path(executable).read_bytes()
    except OSError as error:
        raise HostImageError(f"cannot read {executable}: {error.strerror}") from None
    found = {name: data[start:start + size] for name, (start, size) in spans(data, executable).items()}
    if not found:
        raise HostImageError(f"{executable} carries no bobc images",
                             hint="pass a host built by `bobc build`")
    return found


def describe(executable: Path) -> str:
    """A human-readable listing for `bobc inspect`."""
    sections = read(executable)
    lines = [f"{executable}:"]
    manifest = {}
    if "manifest" in sections:
        try:
            manifest = json.loads(sections["manifest"])
        except ValueError:
            lines.append(f"  manifest {PREFIX}manifest is not JSON")
    if manifest:
        lines.append(f"  target   {manifest.get('target', '?')}")
        for key in ("plan", "entry", "identity"):
            if key in manifest:
                lines.append(f"  {key:<8} {manifest[key]}")
    for name, content in sections.items():
        digest = hashlib.sha256(content).hexdigest()[:16]
        lines.append(f"  {PREFIX + name:<16} {len(content):>9} bytes  sha256 {digest}")
    return "\n".join(lines)
