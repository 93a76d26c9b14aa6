"""Native physical program hosts (`bobc build PLAN --entry DEF`, docs/native-host.md) for
`bobc inspect`, `bobc dump` and `bobc diff`.

Such a host carries one .bobc.* section, its interpreter's .bobc.version: the build's facts
(bobc.host.version.native_text: the bobc and commit that built it, target, compute class,
driver branch), which `HOST --version` prints first and which are shown here as a plan host's
are (`needs and provenance`, --json's `version`, `host.version.*` lines).  After the
interpreter come the native program and its trailer ("NPHYPRG1"), then, for an embedded
artifact, the device images (program table, QMD table, pushbuffer, GPFIFO) under an
"NPEMBED1" footer (bobc.native.artifact).  The embedded images carry no manifest, so they
cannot be decoded field by field as a plan host's can; what is shown is the program command
by command and each image's identity, size and sha256, as self-describing decode.Line facts
that `bobc diff` matches.
"""
from __future__ import annotations

import hashlib
from pathlib import Path

from ..errors import BobcError
from ..resources import doc
from ..native.words import count

KINDS = {1: "program", 2: "qmd", 3: "push", 4: "gpfifo"}
_OPERAND_KINDS = {0: "imm", 1: "slot", 2: "arg", 3: "state"}


def is_native_host(path) -> bool:
    """Whether `path` is a native host, intact or damaged: an ELF file ending in a native host's
    trailer or embedded-artifact footer, or one that carries the interpreter's own trailer magic
    (runtime_c/native_host.c looks for it and names it in its messages) without ending in it --
    a native host cut short, whose read() then says it is damaged, as the host itself does,
    instead of "carries no bobc images"."""
    from ..native.artifact import EMBED_MAGIC, TRAILER_MAGIC

    path = Path(path)
    try:
        if not path.is_file():
            return False
        with open(path, "rb") as handle:
            if handle.read(4) != b"\x7fELF":
                return False
            handle.seek(0, 2)
            size = handle.tell()
            if size >= 16:
                handle.seek(size - 16)
                tail = handle.read(16)
                if tail[8:] == TRAILER_MAGIC or tail[:8] == EMBED_MAGIC:
                    return True
            handle.seek(0)
            return _carries(handle, TRAILER_MAGIC)
    except OSError:
        return False


def _carries(handle, magic: bytes, chunk: int = 1 << 20) -> bool:
    """Whether the open file holds `magic` anywhere (read a chunk at a time)."""
    previous = b""
    while True:
        data = handle.read(chunk)
        if not data:
            return False
        if magic in previous[-(len(magic) - 1):] + data:
            return True
        previous = data


def shown_identity(identity: bytes) -> str:
    """An identity (the program's, an embedded image's) as one line of `bobc dump` and `bobc
    inspect`: its text, a control character (a newline, a NUL, seed-style kind bytes 1-4) as
    \\xNN, so a key's value never spills onto a line of its own or carries raw control bytes
    (`--json` keeps the text itself)."""
    text = identity.decode("utf-8", "replace")
    return "".join(f"\\x{ord(c):02x}" if ord(c) < 0x20 or ord(c) == 0x7F else c for c in text)


def read(path):
    """(HostFile, Program) of a native host; a BobcError for a damaged one."""
    from ..native import artifact, program

    try:
        data = Path(path).read_bytes()
    except OSError as error:
        raise BobcError(f"cannot read {path}: {error.strerror}") from None
    try:
        host = artifact.split(data, str(path))
        decoded = program.decode(host.program)
    except artifact.DamagedHost as error:
        raise BobcError(str(error)) from None
    except program.ProgramError as error:
        raise BobcError(f"{path}: damaged host file: its native program is refused: {error}",
                        hint="rebuild it with `bobc build PLAN --entry DEF`") from None
    return host, decoded, data


def version_section(data: bytes, path) -> bytes | None:
    """The host's .bobc.version section (the build's facts), as the host reads its own; None for
    a host made without it (an interpreter and a trailer, not by `bobc build`), which refuses
    --version as damaged, exit 9."""
    from . import sections
    from .version import SECTION

    try:
        found = sections.spans(data, path).get(SECTION)
    except BobcError:
        return None
    return None if found is None else data[found[0]:found[0] + found[1]]


def _command_text(command) -> str:
    """`Name fields...`: a Connect's sockaddr_in as address:port and an OpenDevice's GPU UUID
    as the driver writes it (or `any`, 16 zero bytes), with the helpers `bobc inspect` reads
    them with (bobc.native.program); other bytes as text when short and printable, else by
    size and sha256."""
    from ..native import program

    parts = [command.name]
    if command.code in (6, 7):
        parts.append(f"op={command.sub}")
    parts += [f"{n:#x}" for n in command.n]
    parts += [f"{_OPERAND_KINDS.get(kind, kind)}:{value:#x}" for kind, value in command.v]
    if command.code == program.CODE_OF["Connect"]:         # 16 bytes, AF_INET: program.decode checked
        address, port = program.socket_address(command.data)
        parts.append(f"{address}:{port}")
    elif command.code == program.CODE_OF["OpenDevice"]:    # 16 bytes: program.decode checked
        parts.append(program.gpu_uuid_text(command.data) if any(command.data) else "any")
    elif command.data:
        if len(command.data) <= 48 and all(32 <= b < 127 for b in command.data):
            parts.append(repr(command.data.decode("ascii")))
        else:
            parts.append(f"<{len(command.data)} bytes sha256 {hashlib.sha256(command.data).hexdigest()[:16]}>")
    return " ".join(parts)


def lines(path) -> list:
    """Every fact of a native host, one decode.Line each (what `bobc dump` prints)."""
    from ..native.artifact import TRAILER_BYTES
    from ..nvidia.decode import Line
    from .sections import version_lines

    host, decoded, data = read(path)
    interpreter = data[:host.host_size - TRAILER_BYTES - len(host.program)]
    sha = lambda b: hashlib.sha256(b).hexdigest()       # noqa: E731
    out = [Line("host.kind", "native physical program host", "docs/native-host.md", "", "header"),
           Line("host.target", host.target, "", "", "header"),
           *version_lines(version_section(data, path)),
           Line("host.interpreter.bytes", len(interpreter), "", "", "header"),
           Line("host.interpreter.sha256", sha(interpreter), "", "", "header"),
           Line("program.bytes", len(host.program), "", "", "header"),
           Line("program.sha256", sha(host.program), "", "", "header"),
           Line("program.identity", shown_identity(decoded.identity.rstrip(b"\0 ")), "", "", "header"),
           Line("program.slots", decoded.slots, "", "", "header"),
           Line("program.state_extent", decoded.state_extent, "", "", "header"),
           Line("program.arguments", decoded.arguments, "file arguments", "", "header"),
           Line("program.commands", len(decoded.commands), "", "", "header"),
           Line("embedded.images", len(host.components), "", "", "header")]
    for kind, identity, content in host.components:
        key = f"embedded[{kind}]"
        owner = shown_identity(identity)
        out += [Line(f"{key}.kind", KINDS.get(kind, str(kind)), "", owner, "header"),
                Line(f"{key}.identity", owner, "", owner, "header"),
                Line(f"{key}.bytes", len(content), "", owner, "header"),
                Line(f"{key}.sha256", sha(content), "", owner, "header")]
    for index, command in enumerate(decoded.commands):
        out.append(Line(f"command[{index}]", _command_text(command), "", "", "command"))
    return out


def summary(path) -> tuple[list[str], dict]:
    """`bobc inspect`'s text lines and JSON object for a native host."""
    from . import sections
    from .version import SECTION, parse

    host, decoded, data = read(path)
    facts = {line.key: line.value for line in lines(path) if line.kind == "header"}
    section = version_section(data, path)
    needs = parse(section) if section is not None else {}
    text = [f"{path}:",
            f"  kind     native physical program host ({doc('native-host.md')})",
            f"  target   {host.target}",
            f"  program  {len(host.program)} bytes, {count(len(decoded.commands), 'command')}, "
            f"{count(decoded.slots, 'slot')}, {decoded.state_extent}-byte state, "
            f"{count(decoded.arguments, 'file argument')}  sha256 {facts['program.sha256'][:16]}",
            f"  identity {facts['program.identity']}"]
    for kind, identity, content in host.components:
        text.append(f"  embedded {KINDS.get(kind, kind):<8} {len(content):>9} bytes  sha256 "
                    f"{hashlib.sha256(content).hexdigest()[:16]}  {shown_identity(identity)}")
    if not host.components:
        text.append("  (no embedded device images)")
    if needs:       # as a plan host's (bobc inspect): the --version text's build facts
        text.append(f"  needs and provenance ({Path(path).name} --version):")
        text += [f"    {key}: {value}" for key, value in needs.items()]
    else:
        text.append(f"  (no {sections.PREFIX}{SECTION} section: it was not built by `bobc build`, or was "
                    f"stripped; the host refuses --version, exit 9)")
    text.append("  `bobc dump` lists its commands; the embedded images carry no manifest, so they are "
                "shown by size and sha256 only")
    info = {"host": str(path), "kind": "native", "target": host.target, "version": needs or None,
            "sections": {} if section is None else
            {sections.PREFIX + SECTION: {"bytes": len(section), "sha256": hashlib.sha256(section).hexdigest()}},
            "program": {"bytes": len(host.program), "sha256": facts["program.sha256"],
                        "identity": decoded.identity.decode("utf-8", "replace").rstrip("\0 "),
                        "commands": len(decoded.commands),
                        "slots": decoded.slots, "state_extent": decoded.state_extent,
                        "arguments": decoded.arguments},
            "embedded": {KINDS.get(kind, str(kind)): {"identity": identity.decode("utf-8", "replace"),
                                                       "bytes": len(content),
                                                       "sha256": hashlib.sha256(content).hexdigest()}
                         for kind, identity, content in host.components}}
    return text, info


def extract(path) -> dict[str, bytes]:
    """The native program and each embedded image as files (native-program.bin, embedded-KIND.bin)."""
    host, _, _ = read(path)
    files = {"native-program.bin": host.program}
    files.update({f"embedded-{KINDS.get(kind, kind)}.bin": content for kind, _, content in host.components})
    return files
