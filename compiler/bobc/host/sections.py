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


# ---------------------------------------------------------------- what a plan host carries besides its images
#
# A plan host is more than its .bobc.* sections: its host plan (runtime_c/plan_host.h's bobc_plan
# and the tables it points at: buffers, semaphores, record checks, initializers, fills, steps, the
# checkpoint contract), generated as host_plan.c (host/templates/host_plan.c.j2), is compiled and
# linked into the executable's own sections (.rodata, .data.rel.ro), beside the runtime's code.
# `bobc diff`, `dump` and `inspect` read it from there: each table by its symbol (the link keeps
# host_plan.c's local symbols), word by word, a word that points at a C string shown as the string;
# and every section that is not a .bobc.* one byte for byte.

IMAGE_SECTIONS = ("program", "qmd", "push", "gpfifo")
# the .bobc.* sections a plan host carries (host/generate.py build_host): the four images, the
# manifest, the version text; any other is compared byte for byte
KNOWN = (*IMAGE_SECTIONS, "manifest", "version")
PLAN_SOURCE = "host_plan.c"          # the generated file whose symbols are the host plan's tables
_SYM = struct.Struct("<IBBHQQ")
_SHT_SYMTAB, _SHT_NOBITS, _STT_OBJECT, _STT_FILE = 2, 8, 1, 4


def own_sections(data: bytes, executable) -> dict[str, bytes]:
    """Every section of a host's bytes that is not a .bobc.* one, by full name, in the section
    table's order: the runtime's code and data and the host plan (no bytes for SHT_NOBITS)."""
    _, table, strings = _layout(data, executable)
    out = {}
    for entry in table[1:]:
        name = _name(strings, entry[0])
        if not name.startswith(PREFIX):
            out[name] = b"" if entry[1] == _SHT_NOBITS else data[entry[4]:entry[4] + entry[5]]
    return out


_PHDR = struct.Struct("<IIQQQQQQ")
# The ELF header's fields as layout_lines names them; e_shoff is left out: the section header
# table follows the .bobc.* sections, so its offset moves with the images' sizes.
_EHDR_FIELDS = ("ident", "type", "machine", "version", "entry", "phoff", None, "flags", "ehsize", "phentsize",
                "phnum", "shentsize", "shnum", "shstrndx")
_SECTION_TYPES = {0: "NULL", 1: "PROGBITS", 2: "SYMTAB", 3: "STRTAB", 4: "RELA", 5: "HASH", 6: "DYNAMIC",
                  7: "NOTE", 8: "NOBITS", 9: "REL", 11: "DYNSYM", 14: "INIT_ARRAY", 15: "FINI_ARRAY",
                  0x6FFFFFF6: "GNU_HASH", 0x6FFFFFFE: "VERNEED", 0x6FFFFFFF: "VERSYM"}
_SEGMENT_TYPES = {0: "NULL", 1: "LOAD", 2: "DYNAMIC", 3: "INTERP", 4: "NOTE", 6: "PHDR", 7: "TLS",
                  0x6474E550: "GNU_EH_FRAME", 0x6474E551: "GNU_STACK", 0x6474E552: "GNU_RELRO",
                  0x6474E553: "GNU_PROPERTY"}


def _flags(value: int, letters: str) -> str:
    """Flag bits as letters (bit k is letters[k]), with any other bits in hex."""
    named = "".join(letter for k, letter in enumerate(letters) if value >> k & 1 and letter != "-")
    rest = value & ~sum(1 << k for k, letter in enumerate(letters) if letter != "-")
    return (named or "-") + (f"+{rest:#x}" if rest else "")


def layout_lines(data: bytes, executable) -> list:
    """What the loader reads besides the sections' bytes, as lines: the ELF header's fields
    (`host.elf.entry = 0x402830`; not e_shoff, which moves with the images), each program header
    (`host.segment[2] = LOAD offset ... memsz ... flags R-X`) and each own section's header
    (`host.section[.bss].header = NOBITS, address ..., size 0x914c0, flags WA`: a NOBITS section's
    size is its only content).  Part of the host identity and of `bobc diff`: a changed entry
    point or a grown .bss is a difference."""
    from ..nvidia.decode import Line

    header, table, strings = _layout(data, executable)
    out = []
    for name, value in zip(_EHDR_FIELDS, header):
        if name is not None:
            out.append(Line(f"host.elf.{name}", value.hex(" ") if isinstance(value, bytes) else value, "", "", "host"))
    phoff, phentsize, phnum = header[5], header[9], header[10]
    if phnum and (phentsize != _PHDR.size or phoff + phnum * _PHDR.size > len(data)):
        raise HostImageError(f"{executable} has no usable program header table")
    for i in range(phnum):
        kind, flags, offset, vaddr, paddr, filesz, memsz, align = _PHDR.unpack_from(data, phoff + i * _PHDR.size)
        out.append(Line(f"host.segment[{i}]", f"{_SEGMENT_TYPES.get(kind, hex(kind))} offset {offset:#x} vaddr "
                        f"{vaddr:#x} paddr {paddr:#x} filesz {filesz:#x} memsz {memsz:#x} flags "
                        f"{_flags(flags, 'XWR')} align {align:#x}", "", "", "host"))
    for entry in table[1:]:
        name = _name(strings, entry[0])
        if not name.startswith(PREFIX):
            _, kind, flags, address, _, size, link, info, align, entsize = entry
            out.append(Line(f"host.section[{name}].header",
                            f"{_SECTION_TYPES.get(kind, hex(kind))}, address {address:#x}, size {size:#x}, flags "
                            f"{_flags(flags, 'WAX-MSILOGT')}, align {align:#x}, entsize {entsize:#x}", "", "", "host"))
    return out


def host_identity(data: bytes, executable) -> str:
    """sha256 over the host's own sections (own_sections: each name, length and bytes, in the
    section table's order) and its layout (layout_lines: the ELF header but e_shoff, the program
    headers, each own section's header -- its type, address, size, flags): the runtime and the host plan -- buffers, semaphores, record checks,
    checkpoint contract, initializers, fills, steps.  Not the .bobc.* sections: the plan identity
    covers the device images, the version text and the manifest are compared on their own.  Two
    hosts with the same plan identity and the same host identity run the same code on the same
    plan and images."""
    digest = hashlib.sha256()
    for name, content in own_sections(data, executable).items():
        encoded = name.encode("utf-8")
        digest.update(len(encoded).to_bytes(8, "little") + encoded + len(content).to_bytes(8, "little") + content)
    for line in layout_lines(data, executable):      # the ELF and program headers, the sections' headers
        encoded = f"{line.key} = {line.value}".encode("utf-8")
        digest.update(len(encoded).to_bytes(8, "little") + encoded)
    return digest.hexdigest()


def _loaded(table, strings):
    """(address, end, file offset, name) of each section with bytes the loader maps."""
    return [(entry[3], entry[3] + entry[5], entry[4], _name(strings, entry[0])) for entry in table
            if entry[3] and entry[1] != _SHT_NOBITS]


def plan_tables(data: bytes, executable) -> dict[str, tuple[int, bytes]]:
    """The host plan's tables: host_plan.c's data symbols (plan, buffers, input_checks, steps...),
    name -> (address, bytes); {} when the host has no symbol table (stripped)."""
    _, table, strings = _layout(data, executable)
    symtab = next((entry for entry in table if entry[1] == _SHT_SYMTAB), None)
    if symtab is None or not 0 < symtab[6] < len(table):
        return {}
    names = table[symtab[6]]
    loaded = _loaded(table, strings)
    out, inside = {}, False
    for at in range(symtab[4], symtab[4] + symtab[5] - _SYM.size + 1, _SYM.size):
        name_at, info, _, _, value, size = _SYM.unpack_from(data, at)
        kind = info & 0xF
        if kind == _STT_FILE:
            inside = _name(data[names[4]:names[4] + names[5]], name_at) == PLAN_SOURCE
            continue
        if not inside or kind != _STT_OBJECT or not size:
            continue
        name = _name(data[names[4]:names[4] + names[5]], name_at)
        for start, end, offset, _ in loaded:
            if start <= value and value + size <= end:
                out[name] = (value, data[offset + value - start:offset + value - start + size])
                break
    return out


def _string_at(data: bytes, loaded, address: int) -> str | None:
    """The C string at `address` of the host's image when it is one (printable, NUL-ended), else None."""
    for start, end, offset, name in loaded:
        if start <= address < end and not name.startswith(".text"):
            at = offset + address - start
            stop = data.find(b"\0", at, offset + end - start)
            if stop < 0 or stop - at > 4096:
                return None
            text = data[at:stop]
            if all(0x20 <= byte < 0x7F or byte in (9, 10) for byte in text):
                return text.decode("ascii")
            return None
    return None


def plan_lines(data: bytes, executable) -> list:
    """The host plan as decode.Line facts, keyed `host.plan.<table>[+0xNN]` (kind host): each 8-byte
    word of each host_plan.c table; a word that points at another table is `&table+0xNN`, one that
    points at a C string is the string (its address in the note).  The fields are not named
    (runtime_c/plan_host.h's layouts are not decoded here): a table and an offset."""
    from ..nvidia.decode import Line

    _, table, strings = _layout(data, executable)
    loaded = _loaded(table, strings)
    tables = plan_tables(data, executable)
    starts = sorted((address, len(content), name) for name, (address, content) in tables.items())
    out = []
    for name, (address, content) in sorted(tables.items(), key=lambda item: item[1][0]):
        padded = content + bytes(-len(content) % 8)
        for k in range(0, len(padded), 8):
            word = int.from_bytes(padded[k:k + 8], "little")
            value, note = word, ""
            pointed = next((f"&{other}" + (f"+{word - start:#x}" if word != start else "")
                            for start, size, other in starts if start <= word < start + size), None)
            if pointed is not None:
                value, note = pointed, f"{word:#x}"
            elif word:
                text = _string_at(data, loaded, word)
                if text is not None:
                    value, note = text, f"a C string at {word:#x}"
            out.append(Line(f"host.plan.{name}[+{k:#x}]", value, note, "host plan", "host"))
    return out


def version_lines(section: bytes | None) -> list:
    """The .bobc.version text as facts, `host.version.<key> = value` (kind host)."""
    from ..nvidia.decode import Line
    from .version import parse

    if section is None:
        return []
    return [Line(f"host.version.{key}", value, "", "", "host") for key, value in parse(section).items()]


def section_lines(data: bytes, executable) -> list:
    """Each of the host's own sections (own_sections) as `host.section[NAME] = N bytes, sha256 ...`
    (a NOBITS one: its size, as it has no bytes in the file), then the layout (layout_lines)."""
    from ..nvidia.decode import Line

    _, table, strings = _layout(data, executable)
    nobits = {_name(strings, entry[0]): entry[5] for entry in table[1:] if entry[1] == _SHT_NOBITS}
    return [Line(f"host.section[{name}]", f"{nobits[name]} bytes, NOBITS (zeros when loaded, none in the file)"
                 if name in nobits else section_summary(content), "", "", "host")
            for name, content in own_sections(data, executable).items()] + layout_lines(data, executable)


def section_summary(content: bytes) -> str:
    return f"{len(content)} bytes, sha256 {hashlib.sha256(content).hexdigest()[:16]}"


def _strings(content: bytes) -> list[str]:
    import re

    return [m.group().decode("ascii") for m in re.finditer(rb"[\x20-\x7e]{4,}", content)]


def section_change(name: str, x: bytes | None, y: bytes | None) -> str:
    """What differs between two versions of one section, in words: how many bytes, the first
    offset, and the printable strings (4 characters or more) found in only one of them."""
    from collections import Counter

    if x is None or y is None:
        return "a section only one host has"
    if len(x) != len(y):
        head = f"its length differs ({len(x)} -> {len(y)} bytes)"
    else:
        differing = [i for i in range(len(x)) if x[i] != y[i]]
        head = f"{len(differing)} byte(s) differ, the first at +{differing[0]:#x}"
    if not name.startswith((".rodata", ".data", PREFIX)):     # code and tables: no strings to tell
        return head
    only_a, only_b = Counter(_strings(x)), Counter(_strings(y))
    only_a, only_b = list((only_a - only_b).elements()), list((only_b - only_a).elements())

    def listed(texts):
        shown = ", ".join(repr(t[:60]) for t in texts[:4])
        return shown + (f" and {len(texts) - 4} more" if len(texts) > 4 else "")
    parts = [head]
    if only_a or only_b:
        parts.append(f"strings only in a: {listed(only_a) or 'none'}; only in b: {listed(only_b) or 'none'}")
    return "; ".join(parts)
