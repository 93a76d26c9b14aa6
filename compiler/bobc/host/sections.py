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
from dataclasses import dataclass
from pathlib import Path

from ..certify.limits import shown_bytes
from ..errors import BobcError, write_temporary
from ..plan.host import ENCODINGS, FILES, INTERPRETED, RECORD_CHECKS, SCALAR_OPS, WORD_FORMATS
from . import steps_c

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
    if len(data) < _EHDR.size and data[:4] == b"\x7fELF":
        raise _truncated(executable, len(data), _EHDR.size, "ELF header")
    if len(data) < _EHDR.size or data[:4] != b"\x7fELF" or data[4] != 2 or data[5] != 1:
        raise HostImageError(f"{executable} is not a 64-bit little-endian ELF file",
                             hint="pass a host built by `bobc build`")
    header = list(_EHDR.unpack_from(data))
    _check_loader_view(data, header, executable)
    shoff, shentsize, shnum, shstrndx = header[6], header[11], header[12], header[13]
    if shentsize != _SHDR.size:
        raise _broken(executable, f"e_shentsize is {shentsize}, not {_SHDR.size} (an ELF64 section header's size)")
    if not 0 < shnum < _SHN_LORESERVE:
        raise _broken(executable, f"e_shnum is {shnum}: a host has a section table of 1..{_SHN_LORESERVE - 1} entries")
    if not 0 < shstrndx < shnum:
        raise _broken(executable, f"e_shstrndx is {shstrndx}, not a section of its {shnum} (1..{shnum - 1})")
    if shoff + shnum * _SHDR.size > len(data):
        raise _truncated(executable, len(data), shoff + shnum * _SHDR.size,
                         f"section header table (e_shoff {shoff:#x}, {shnum} headers of {_SHDR.size} bytes)")
    table = [list(_SHDR.unpack_from(data, shoff + i * _SHDR.size)) for i in range(shnum)]
    names = table[shstrndx]
    if names[4] + names[5] > len(data):
        raise _truncated(executable, len(data), names[4] + names[5],
                         f"section name table (section {shstrndx}, offset {names[4]:#x}, {names[5]} bytes)")
    return header, table, data[names[4]:names[4] + names[5]]


_PT_LOAD = 1
# A host damaged outside its .bobc.* sections may never reach its own check (exit 9): the loader
# maps it, and a cut-short or broken one crashes before main, with no message of its own.
def _crash() -> str:
    from ..resources import doc

    return (f"a host damaged like this may crash before it can say so (a segmentation fault, exit 139; "
            f"{doc('runtime.md')}, exit code 9)")


def _truncated(executable, size: int, needed: int, what: str) -> HostImageError:
    return HostImageError(f"{executable} is truncated: it is {size} bytes, but its {what} ends at byte {needed}",
                          hint=f"the file was cut short (an interrupted copy or download): copy it again, or "
                               f"rebuild it with `bobc build`; {_crash()}")


def _broken(executable, what: str) -> HostImageError:
    return HostImageError(f"{executable} has a broken ELF header: {what}",
                          hint=f"copy the host again, or rebuild it with `bobc build`; {_crash()}")


def _check_loader_view(data: bytes, header: list, executable) -> None:
    """Refuse (HostImageError naming the field, or the size the file falls short of) an ELF64 file
    the loader cannot map as its headers say: the ELF header's fields a host's start depends on,
    its program header table and each LOAD segment's bytes inside the file, its entry point in a
    LOAD segment (elf.h; what `bobc inspect` says of a host that crashes before main)."""
    _, kind, _, version, entry, phoff, _, _, ehsize, phentsize, phnum, _, _, _ = header
    if version != 1:
        raise _broken(executable, f"e_version is {version}, not 1 (EV_CURRENT)")
    if kind not in (2, 3):
        raise _broken(executable, f"e_type is {kind}, not 2 (an executable) or 3 (a position-independent one)")
    if ehsize != _EHDR.size:
        raise _broken(executable, f"e_ehsize is {ehsize}, not {_EHDR.size} (an ELF64 header's size)")
    if phentsize != _PHDR.size:
        raise _broken(executable, f"e_phentsize is {phentsize}, not {_PHDR.size} (an ELF64 program header's size)")
    if not 0 < phnum < 0xFFFF:
        raise _broken(executable, f"e_phnum is {phnum}: an executable has program headers (1..65534)")
    if phoff < _EHDR.size:
        raise _broken(executable, f"e_phoff is {phoff:#x}: the program header table lies after the "
                      f"{_EHDR.size}-byte ELF header")
    if phoff + phnum * _PHDR.size > len(data):
        raise _truncated(executable, len(data), phoff + phnum * _PHDR.size,
                         f"program header table (e_phoff {phoff:#x}, {phnum} headers of {_PHDR.size} bytes)")
    loads = []
    for i in range(phnum):
        segment, _, offset, vaddr, _, filesz, memsz, _ = _PHDR.unpack_from(data, phoff + i * _PHDR.size)
        if segment != _PT_LOAD:
            continue
        if offset + filesz > len(data):
            raise _truncated(executable, len(data), offset + filesz,
                             f"segment {i} (LOAD, offset {offset:#x}, {filesz:#x} bytes in the file)")
        loads.append((vaddr, memsz))
    if not loads:
        raise _broken(executable, "no program header is a LOAD segment: nothing of it would be mapped")
    if not any(vaddr <= entry < vaddr + memsz for vaddr, memsz in loads):
        raise _broken(executable, f"e_entry {entry:#x} lies in none of its LOAD segments")


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
    write_temporary(temporary, out)         # a full disk or `ulimit -f`: one message, exit 8
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
# `bobc diff`, `dump` and `inspect` read it from there: from its `plan` symbol (the link keeps
# host_plan.c's local symbols), member by member by the layout declared below (PLAN_STRUCTS);
# and every section that is not a .bobc.* one byte for byte.

# the four device images, in the plan identity's order (host/version.py plan_identity; the host's
# own check, runtime_c/host_version.c rt_host_check_images, reads them in this order too)
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


def plan_words(data: bytes, executable) -> list:
    """The host plan as raw words, keyed `host.plan.<table>[+0xNN]` (kind host): each 8-byte word of each
    host_plan.c table; a word that points at another table is `&table+0xNN`, one that points at a C
    string is the string (its address in the note).  What plan_lines falls back to for a host whose
    tables do not decode by PLAN_LAYOUT (one built by a bobc with another layout)."""
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


# ---------------------------------------------------------------- the host plan's layout, declared once
#
# The C structures host_plan.c fills (runtime_c/plan_host.h, host_runtime.h, and plan_steps.h, itself
# rendered from bobc.plan.host.STEP_KINDS) as data: each structure's members in order, with their C
# type and how a dump shows them.  The decoder (plan_lines) reads a host's tables by it; the generator
# takes its enum names from it (bobc.host.generate: LOCATIONS, record check and initializer kinds);
# tests/host/test_plan_layout.py compiles the runtime's headers and checks every offset, size and enum
# value here is the C compiler's.  The x86-64 System V rules place the members.

# the C scalar types: (size, struct format)
C_SCALARS = {"int": (4, "<i"), "int32_t": (4, "<i"), "uint32_t": (4, "<I"), "uint64_t": (8, "<Q"),
             "double": (8, "<d"), "uint8_t": (1, "<B"), "pointer": (8, "<Q")}


@dataclass(frozen=True)
class CField:
    """One member: `c_type` a C_SCALARS key or a PLAN_STRUCTS name; `show` how it is decoded:
    "number"; "string" (a C string pointer, NULL allowed); "enum:NAME" (PLAN_ENUMS[NAME]);
    "array:STRUCT:COUNT" (a pointer to COUNT elements, COUNT a member path of the enclosing structure,
    from bobc_plan down: `contract.chunk_count`); "bytes:COUNT" (a pointer to COUNT bytes);
    "count" (a count its array or bytes already show: not a line of its own)."""

    name: str
    c_type: str
    show: str = "number"


def _fields(*rows) -> tuple[CField, ...]:
    return tuple(CField(*row) for row in rows)


# enum name -> ((C constant, value, name shown), ...)
PLAN_ENUMS: dict[str, tuple[tuple[str, int, str], ...]] = {
    "rt_mem_location": (("RT_MEM_SYSTEM", 0, "system"), ("RT_MEM_VIDEO", 1, "video")),   # nv_shim.h
    "rt_check": tuple((f"RT_CHECK_{name.upper()}", code, name)                            # host_runtime.h
                      for code, (_, name) in enumerate(RECORD_CHECKS, start=1)),
    "rt_word_format": tuple((f"RT_WORD_{name.upper()}", code, name)                 # host_runtime.h, from 0
                            for code, (_, name, _) in enumerate(WORD_FORMATS)),
    "rt_init": (("RT_INIT_ZERO", 1, "zero"), ("RT_INIT_SPLITMIX64", 2, "splitmix64")),     # host_runtime.h
    # plan_steps.h, rendered from bobc.plan.host's tables (bobc.host.steps_c)
    "bobc_file": tuple((f"BOBC_FILE_{name.upper().replace('-', '_')}", code, name)
                       for code, (_, name) in enumerate(FILES, start=1)),
    "bobc_scalar_op": tuple((f"BOBC_SCALAR_{name.upper()}", code, name)
                            for code, (_, name, _) in enumerate(SCALAR_OPS, start=1)),
    "bobc_encoding": tuple((f"BOBC_ENCODE_{name.upper()}", code, name)
                           for code, name in enumerate(ENCODINGS.values(), start=1)),
    "bobc_step_op": tuple((steps_c.enum_name(kind), code, kind.name) for code, kind in enumerate(INTERPRETED, start=1)),
}


def enum_constant(enum: str, name: str) -> str | None:
    """The C constant of `name` in PLAN_ENUMS[enum] (None: not one of it)."""
    return next((constant for constant, _, shown in PLAN_ENUMS[enum] if shown == name), None)


def _step_struct(kind) -> tuple[CField, ...]:
    """bobc_step_<kind> as plan_steps.h declares it (bobc.host.steps_c.render_header): from the step table."""
    out = []
    for f in kind.c_fields:
        if f.c_type == "bytes":
            out += [CField(f.name, "pointer", f"bytes:{f.name}_bytes"), CField(f"{f.name}_bytes", "uint64_t", "count")]
        else:
            out.append(CField(f.name, f.c_type, "enum:bobc_file" if f.kind == "file" else "number"))
    return tuple(out) or (CField("none", "uint8_t", "count"),)


PLAN_STRUCTS: dict[str, tuple[CField, ...]] = {
    "bobc_buffer": _fields(("name", "pointer", "string"), ("gpu_va", "uint64_t"), ("size", "uint64_t"),
                           ("section", "pointer", "string"), ("location", "int", "enum:rt_mem_location")),
    "rt_record_check": _fields(("kind", "int", "enum:rt_check"), ("what", "pointer", "string"),
                               ("offset", "uint64_t"), ("width", "uint32_t"), ("stride", "uint64_t"),
                               ("count", "uint64_t"), ("value", "uint64_t"), ("data", "pointer", "bytes:data_bytes"),
                               ("data_bytes", "uint32_t", "count"), ("other", "uint64_t"), ("other_width", "uint32_t"),
                               ("other_stride", "uint64_t"), ("format", "int", "enum:rt_word_format")),
    "rt_record_contract": _fields(("record_bytes", "uint64_t"),
                                  ("checks", "pointer", "array:rt_record_check:check_count"),
                                  ("check_count", "uint32_t", "count")),
    "rt_contract": _fields(("schema", "pointer", "string"), ("learner", "pointer", "string"),
                           ("data", "pointer", "string"), ("seed", "pointer", "string"),
                           ("payload_bytes", "uint64_t"), ("chunk_bytes", "uint64_t"), ("chunk_count", "uint32_t"),
                           ("updates_per_invocation", "uint64_t")),
    "rt_initializer": _fields(("kind", "int", "enum:rt_init"), ("seed", "pointer", "string"), ("shift", "uint32_t"),
                              ("center", "uint64_t"), ("denominator", "uint64_t")),
    "bobc_scalar_term": _fields(("op", "int", "enum:bobc_scalar_op"), ("value", "double")),
    "bobc_fill": _fields(("va", "uint64_t"), ("step", "uint64_t"), ("encoding", "int", "enum:bobc_encoding"),
                         ("term_count", "uint32_t", "count"), ("terms", "pointer", "terms:term_count")),
    **{f"bobc_step_{kind.name}": _step_struct(kind) for kind in INTERPRETED},
    "bobc_launch": _fields(("kernel", "pointer", "string"), ("grid_x", "uint32_t"), ("grid_y", "uint32_t"),
                           ("grid_z", "uint32_t"), ("place", "pointer", "string")),
    "bobc_submission": _fields(("launch_count", "uint32_t", "count"),
                               ("launches", "pointer", "array:uint32_t:launch_count")),
    "bobc_plan": _fields(("target", "pointer", "string"), ("identity", "pointer", "string"),
                         ("buffers", "pointer", "array:bobc_buffer:buffer_count"), ("buffer_count", "uint32_t", "count"),
                         ("prologue_entry", "uint64_t"), ("submission_count", "uint32_t"),
                         ("semaphore_va", "pointer", "array:uint64_t:submission_count"),
                         ("semaphore_payload", "uint64_t"), ("contract", "rt_contract"),
                         ("initializers", "pointer", "array:rt_initializer:contract.chunk_count"),
                         ("input", "rt_record_contract"),
                         ("fills", "pointer", "array:bobc_fill:fill_count"), ("fill_count", "uint32_t", "count"),
                         ("steps", "pointer", "steps:step_count"), ("step_count", "uint32_t", "count"),
                         ("wait_timeout_ms", "uint32_t"),
                         ("launches", "pointer", "array:bobc_launch:launch_count"), ("launch_count", "uint32_t", "count"),
                         ("submissions", "pointer", "array:bobc_submission:submission_count")),
}


def c_layout(c_type: str) -> tuple[int, int, dict[str, int]]:
    """(size, alignment, member -> offset) of a C type of the layout; `bobc_step` is plan_steps.h's
    `{ int op; union { bobc_step_<kind> <kind>; ... } u; }` (its members keyed `u.<kind>`)."""
    if c_type in C_SCALARS:
        size = C_SCALARS[c_type][0]
        return size, size, {}
    if c_type == "bobc_step":
        members = [c_layout(f"bobc_step_{kind.name}") for kind in INTERPRETED]
        union_align = max(align for _, align, _ in members)
        union_size = _align(max(size for size, _, _ in members), union_align)
        at = _align(4, union_align)
        alignment = max(4, union_align)
        return _align(at + union_size, alignment), alignment, {"op": 0, **{f"u.{kind.name}": at for kind in INTERPRETED}}
    offsets, at, alignment = {}, 0, 1
    for f in PLAN_STRUCTS[c_type]:
        size, align, _ = c_layout(f.c_type)
        at = _align(at, align)
        offsets[f.name] = at
        at += size
        alignment = max(alignment, align)
    return _align(at, alignment), alignment, offsets


class _Undecodable(Exception):
    pass


class _Memory:
    """A host's loaded bytes by virtual address (the sections the loader maps; .text not a string)."""

    def __init__(self, data: bytes, loaded):
        self.data, self.loaded = data, loaded

    def read(self, address: int, size: int) -> bytes:
        for start, end, offset, _ in self.loaded:
            if start <= address and address + size <= end:
                return self.data[offset + address - start:offset + address - start + size]
        raise _Undecodable(f"{shown_bytes(size)} at {address:#x} lie{'s' if size == 1 else ''} outside the host's "
                           "loaded sections")

    def string(self, address: int) -> str:
        if address == 0:
            return "NULL"
        for start, end, offset, name in self.loaded:
            if start <= address < end and not name.startswith(".text"):
                at = offset + address - start
                stop = self.data.find(b"\0", at, offset + end - start)
                if stop >= 0:     # one line whatever it holds: a byte not printable ASCII (or \\) as \\xNN
                    return "".join(chr(b) if 0x20 <= b < 0x7F and b != 0x5C else f"\\x{b:02x}"
                                   for b in self.data[at:stop])
        raise _Undecodable(f"no C string at {address:#x}")


def _bytes_text(content: bytes) -> str:
    """Bytes as a dump shows them: hex when short, else their size and sha256."""
    if len(content) <= 32:
        return content.hex(" ") if content else "none"
    return f"{len(content)} bytes, sha256 {hashlib.sha256(content).hexdigest()[:16]}"


def _enum(name: str, value: int) -> str:
    return next((shown for _, code, shown in PLAN_ENUMS[name] if code == value), f"unknown {value}")


def _number(c_type: str, content: bytes) -> int | float:
    return struct.unpack(C_SCALARS[c_type][1], content)[0]


def _member(raw: bytes, c_type: str, path: str):
    """The scalar member `path` (`chunk_count`, `contract.chunk_count`) of a `c_type` structure's bytes."""
    head, _, rest = path.partition(".")
    field = next((f for f in PLAN_STRUCTS[c_type] if f.name == head), None)
    if field is None:
        raise _Undecodable(f"{c_type} has no member {head}")
    at = c_layout(c_type)[2][head]
    if rest:
        return _member(raw[at:], field.c_type, rest)
    return _number(field.c_type, raw[at:at + C_SCALARS[field.c_type][0]])


def _decode_struct(memory: _Memory, c_type: str, address: int, key: str, owner: str, out: list) -> None:
    """The members of the structure `c_type` at `address` as lines `key.<member>`, in declaration
    order (a count shown by its array is not a line of its own)."""
    from ..nvidia.decode import Line

    size, _, offsets = c_layout(c_type)
    raw = memory.read(address, size)
    for f in PLAN_STRUCTS[c_type]:
        at = f"{key}.{f.name}"
        if f.c_type in PLAN_STRUCTS:
            _decode_struct(memory, f.c_type, address + offsets[f.name], at, owner, out)
            continue
        if f.show == "count":
            continue
        value = _member(raw, c_type, f.name)
        kind, _, arg = f.show.partition(":")
        if kind == "number":
            out.append(Line(at, value, "", owner, "host"))
        elif kind == "string":
            out.append(Line(at, memory.string(value), "", owner, "host"))
        elif kind == "enum":
            out.append(Line(at, _enum(arg, value), "", owner, "host"))
        elif kind == "bytes":
            n = _member(raw, c_type, arg)
            out.append(Line(at, _bytes_text(memory.read(value, n) if n else b""), "", owner, "host"))
        elif kind == "terms":
            out.append(Line(at, _terms(memory, value, _member(raw, c_type, arg)), "postfix: operands first",
                            owner, "host"))
        elif kind == "array":
            element, _, count = arg.partition(":")
            element_size = c_layout(element)[0]
            for i in range(_member(raw, c_type, count)):
                if element in PLAN_STRUCTS:
                    _decode_struct(memory, element, value + i * element_size, f"{at}[{i}]", owner, out)
                else:
                    out.append(Line(f"{at}[{i}]", _number(element, memory.read(value + i * element_size,
                                                                                element_size)), "", owner, "host"))
        elif kind == "steps":
            _decode_steps(memory, value, _member(raw, c_type, arg), at, out)
        else:
            raise _Undecodable(f"{c_type}.{f.name}: no way to show {f.show}")


def _terms(memory: _Memory, address: int, count: int) -> str:
    size = c_layout("bobc_scalar_term")[0]
    offsets = c_layout("bobc_scalar_term")[2]
    out = []
    for i in range(count):
        raw = memory.read(address + i * size, size)
        op = _enum("bobc_scalar_op", _number("int", raw[offsets["op"]:offsets["op"] + 4]))
        value = _number("double", raw[offsets["value"]:offsets["value"] + 8])
        out.append(f"constant {value!r} ({value.hex()})" if op == "constant" else op)
    return "[" + ", ".join(out) + "]"


def _decode_steps(memory: _Memory, address: int, count: int, key: str, out: list) -> None:
    """Each step as `key[i] = <kind>` and its members `key[i].<member>` (owner: the kind)."""
    from ..nvidia.decode import Line

    size, _, offsets = c_layout("bobc_step")
    for i in range(count):
        at = address + i * size
        op = _number("int", memory.read(at, 4))
        kind = _enum("bobc_step_op", op)
        if kind.startswith("unknown"):
            raise _Undecodable(f"step {i} has op {op}, no step kind of this bobc")
        out.append(Line(f"{key}[{i}]", kind, "", kind, "host"))
        _decode_struct(memory, f"bobc_step_{kind}", at + offsets[f"u.{kind}"], f"{key}[{i}]", kind, out)


def plan_lines(data: bytes, executable) -> list:
    """The host plan as decode.Line facts (kind host), decoded from host_plan.c's `plan` by PLAN_LAYOUT,
    each member named: `host.plan.target = sm_90`, `host.plan.buffers[2].size = 0x200000  # arena`,
    `host.plan.contract.chunk_bytes = 0x1000`, `host.plan.input.checks[1].value = 0x1  # version`,
    `host.plan.steps[3] = write_at`, `host.plan.steps[3].offset = 0x4  # write_at` (a step's owner is
    its kind; a buffer's its name; a record check's what it names), a C string as the string, an enum
    as its name, bytes as hex (over 32: their size and sha256), a fill's terms in postfix.  A host
    whose tables do not decode so (built by a bobc of another layout) is shown word by word
    (plan_words), after one line saying why; a host without a symbol table (stripped): no lines."""
    from dataclasses import replace

    from ..nvidia.decode import Line

    _, table, strings = _layout(data, executable)
    tables = plan_tables(data, executable)
    if "plan" not in tables:
        return []
    out: list = []
    try:
        _decode_struct(_Memory(data, _loaded(table, strings)), "bobc_plan", tables["plan"][0], "host.plan", "", out)
    except (_Undecodable, struct.error) as error:
        return [Line("host.plan", "not decoded", f"{error}: its tables word by word", "host plan", "host")] + \
            plan_words(data, executable)
    # owners: a buffer by its name, a record check by what it names, an initializer by its kind
    names = {}
    for line in out:
        for table_key, member in (("host.plan.buffers[", ".name"), ("host.plan.input.checks[", ".what")):
            if line.key.startswith(table_key) and line.key.endswith(member):
                names[line.key[:-len(member)]] = line.value
    return [replace(line, owner=names[line.key[:line.key.index("]") + 1]]) if not line.owner and
            line.key.startswith(("host.plan.buffers[", "host.plan.input.checks[")) and
            line.key[:line.key.index("]") + 1] in names else line for line in out]


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
        head = (f"{shown_bytes(len(differing))} differ{'s' if len(differing) == 1 else ''}, the first at "
                f"+{differing[0]:#x}")
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
