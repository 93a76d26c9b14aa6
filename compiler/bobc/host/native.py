"""Native physical program hosts (`bobc build PLAN --entry DEF`, docs/native-host.md) for
`bobc inspect`, `bobc dump` and `bobc diff`.

Such a host carries one .bobc.* section, its interpreter's .bobc.version: the build's facts
(bobc.host.version.native_text: the bobc and commit that built it, target, compute class,
driver branch), which `HOST --version` prints first and which are shown here as a plan host's
are (`needs and provenance`, --json's `version`, `host.version.*` lines).  After the
interpreter come the native program and its trailer ("NPHYPRG1"), then, for an embedded
artifact, the device images (program table, QMD table, pushbuffer, GPFIFO) under an
"NPEMBED1" footer (bobc.native.artifact).  Where its build encoded the embedded images, the
interpreter carries their manifest as a .bobc.manifest section (native.build.carry_manifest), and
they are decoded field by field as a plan host's are (carried_images); else what is shown is the
program command by command and each image's identity, size and sha256, as self-describing
decode.Line facts that `bobc diff` matches.
"""
from __future__ import annotations

import hashlib
from pathlib import Path

from ..errors import BobcError
from ..resources import doc
from ..native.words import count
from ..nvidia.encode import IMAGE_FILES

KINDS = {1: "program", 2: "qmd", 3: "push", 4: "gpfifo"}
# what a differing embedded image's line says (bobc diff of two native hosts)
NO_MANIFEST = ("a host without a .bobc.manifest section (built by a bobc before it) carries no manifest for its "
               "embedded images, so they are compared by sha256 here; rebuild both with `bobc build PLAN --entry "
               "DEF -o HOST`, which writes it, or write the images with `--emit-images DIR` and diff the folders")
# Runtime.NativePhysicalProgram's operand kinds: Immediate 0, Slot 1, StateWord 2, MappedWord 3 (docs/platform.md)
_OPERAND_KINDS = {0: "imm", 1: "slot", 2: "state", 3: "mapped"}


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


def manifest_section(data: bytes, path) -> bytes | None:
    """The host's .bobc.manifest section (the manifest of its embedded images, which `bobc build`
    writes into its interpreter: native.build.carry_manifest), else None."""
    from . import sections

    try:
        found = sections.spans(data, path).get("manifest")
    except BobcError:
        return None
    return None if found is None else data[found[0]:found[0] + found[1]]


def launches_section(data: bytes, path) -> bytes | None:
    """The host's .bobc.launches section (the launch table its GPU fault lines name launches by:
    bobc.native.launches, written beside the manifest), else None."""
    from ..native.launches import SECTION
    from . import sections

    try:
        found = sections.spans(data, path).get(SECTION)
    except BobcError:
        return None
    return None if found is None else data[found[0]:found[0] + found[1]]


def carried_images(path):
    """The device images a native host embeds, as an Images decoded by the manifest its
    .bobc.manifest section carries (checked against them as an image folder's manifest is: a
    mismatch is a damaged host, exit 2 in `bobc diff`), with its native program
    (`native_program`); None for a host without that section (a bobc before it built the host,
    or its images are no set bobc encoded while building it: docs/native-host.md, "Comparing
    builds")."""
    from ..nvidia.decode import _images, host_manifest
    from ..nvidia.encode import NATIVE_PROGRAM_FILE
    from . import sections

    host, _, data = read(path)
    section = manifest_section(data, path)
    if section is None or len(host.components) != 4:
        return None
    manifest = host_manifest(path, section)
    if manifest.get("native_program") is not None:
        raise BobcError(f"{path}: damaged host file: its {sections.PREFIX}manifest section names a native_program, "
                        "which a host's own manifest never does (its program is in the host)",
                        hint="rebuild it with `bobc build PLAN --entry DEF`")
    # the host's program, named as its build's image folder's manifest names native-program.bin, so a
    # host and the folder its build wrote hold the same manifest facts
    manifest = manifest | {"native_program": {"file": NATIVE_PROGRAM_FILE, "bytes": len(host.program),
                                              "sha256": hashlib.sha256(host.program).hexdigest()}}
    parts = {kind: content for kind, _, content in host.components}
    data_of = {attribute: parts[kind] for kind, attribute in _IMAGE_ATTRIBUTES.items()}
    labels = {attribute: f"{path}: its embedded {KINDS[kind]} image" for kind, attribute in _IMAGE_ATTRIBUTES.items()}
    images = _images(manifest, data_of, path, labels, hint="the host is damaged: rebuild it with `bobc build "
                                                         "PLAN --entry DEF`")
    images.manifest_bytes = (f"section {sections.PREFIX}manifest", section)
    images.native_program = host.program
    return images


def lines(path, images=None) -> list:
    """Every fact of a native host, one decode.Line each (what `bobc dump` prints).  With its
    carried `images` (carried_images), the interpreter is named by its identity (its own sections
    and layout: sections.host_identity, which its .bobc.manifest section does not enter), the
    manifest by its size and sha256, and the commands are left to folder_lines, which notes each
    field that names an image place."""
    from ..native.artifact import TRAILER_BYTES
    from ..nvidia.decode import Line
    from . import sections
    from ..native.launches import lines as launch_lines
    from .sections import version_lines

    host, decoded, data = read(path)
    interpreter = data[:host.host_size - TRAILER_BYTES - len(host.program)]
    sha = lambda b: hashlib.sha256(b).hexdigest()       # noqa: E731
    if images is None:
        named = [Line("host.interpreter.bytes", len(interpreter), "", "", "header"),
                 Line("host.interpreter.sha256", sha(interpreter), "", "", "header")]
    else:
        manifest = images.manifest_bytes[1]
        named = [Line("host.interpreter.identity", f"sha256 {sections.host_identity(interpreter, path)}",
                      "its own sections and layout: the runtime (not the manifest)", "", "header"),
                 Line("host.manifest.bytes", len(manifest), "", "", "header"),
                 Line("host.manifest.sha256", sha(manifest), "the embedded images' manifest (.bobc.manifest)", "",
                      "header")]
    out = [Line("host.kind", "native physical program host", "docs/native-host.md", "", "header"),
           Line("host.target", host.target, "", "", "header"),
           *version_lines(version_section(data, path)),
           *named,
           Line("program.bytes", len(host.program), "", "", "header"),
           Line("program.sha256", sha(host.program), "", "", "header"),
           Line("program.identity", shown_identity(decoded.identity.rstrip(b"\0 ")), "", "", "header"),
           Line("program.slots", decoded.slots, "", "", "header"),
           Line("program.state_extent", decoded.state_extent, "", "", "header"),
           Line("program.arguments", decoded.arguments, "file arguments", "", "header"),
           Line("program.commands", len(decoded.commands), "", "", "header"),
           Line("embedded.images", len(host.components), "", "", "header"),
           *launch_lines(launches_section(data, path), path)]
    for kind, identity, content in host.components:
        key = f"embedded[{kind}]"
        owner = shown_identity(identity)
        out += [Line(f"{key}.kind", KINDS.get(kind, str(kind)), "", owner, "header"),
                Line(f"{key}.identity", owner, "", owner, "header"),
                Line(f"{key}.bytes", len(content), "", owner, "header"),
                Line(f"{key}.sha256", sha(content), "", owner, "header")]
    if images is not None:
        return out
    for index, command in enumerate(decoded.commands):
        out.append(Line(f"command[{index}]", _command_text(command), _branches(command), "", "command"))
    return out


# where a command's two fragments start (docs/platform.md: Repeat count body, then what follows it;
# BranchZero value whenZero otherwise): the commands after it in the bytes, the second after the
# first's last command, so a reader of the list is told, not left to count
_FRAGMENTS = {"Repeat": ("body", "after it"), "BranchZero": ("when zero", "otherwise")}


def _branches(command) -> str:
    names = _FRAGMENTS.get(command.name)
    return "" if names is None else f"{names[0]}: command[{command.child[0]}], {names[1]}: command[{command.child[1]}]"


def summary(path) -> tuple[list[str], dict]:
    """`bobc inspect`'s text lines and JSON object for a native host."""
    from . import sections
    from .version import SECTION, parse

    host, decoded, data = read(path)
    facts = {line.key: line.value for line in lines(path) if line.kind == "header"}
    section = version_section(data, path)
    manifest = manifest_section(data, path)
    if manifest is not None:
        carried_images(path)        # a damaged manifest section is refused, as `bobc dump` refuses it
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
    if manifest is not None:
        text.append(f"  manifest {sections.PREFIX}manifest: `bobc dump` decodes its embedded images and lists its "
                    "commands, `bobc diff` compares them field by field")
    else:
        text.append("  `bobc dump` lists its commands; the embedded images carry no manifest, so they are "
                    "shown by size and sha256 only")
    info = {"host": str(path), "kind": "native", "target": host.target, "version": needs or None,
            "sections": {sections.PREFIX + name: {"bytes": len(content), "sha256": hashlib.sha256(content).hexdigest()}
                         for name, content in ((SECTION, section), ("manifest", manifest)) if content is not None},
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


# Where a command names mapped memory (docs/platform.md's table): (command name, index into its
# naturals) -- CopyStateToMapped's destination, CopyMappedToState's source, WriteMapped's and
# WaitMapped's address, Submit's ring, GPPut word and semaphore, WriteMappedFile's source.
# LoadEmbedded's and LoadImage's destinations say where an image lies (_ImagePlaces).
MAPPED_FIELDS = {"CopyStateToMapped": (1,), "CopyMappedToState": (0,), "WriteMapped": (0,), "WaitMapped": (0,),
                 "Submit": (0, 2, 3), "WriteMappedFile": (1,)}
MAPPED_OPERAND = 3          # NativePhysicalMappedWord (Runtime.NativePhysicalProgram): its value is an address
_IMAGE_ATTRIBUTES = {1: "program", 2: "qmd", 3: "push", 4: "gpfifo"}


class _ImagePlaces:
    """What a mapped address of a native program names in its images (a native host's image folder:
    `bobc build --entry DEF --emit-images`): the image a LoadEmbedded of its kind (or a LoadImage of
    its very bytes) put at a host address, then, by the images' manifest, the launch parameter word
    (`launch[7] (KERNEL) param+0x30`, counted from the target's parameter base), the launch's QMD
    field, the submission's pushbuffer segment or the GPFIFO entry.  A place is a tuple, equal on
    two sides when it names the same thing of paired launches (`launch_keys`: golden.LaunchAlignment)."""

    def __init__(self, commands, images, launch_keys: dict) -> None:
        self.manifest = images.manifest
        self.images = images
        self.launch_keys = launch_keys
        self.loaded = []            # (host address, bytes, kind)
        for command in commands:
            if command.name == "LoadEmbedded" and command.n[0] in _IMAGE_ATTRIBUTES:
                kind = command.n[0]
                self.loaded.append((command.n[1], len(getattr(images, _IMAGE_ATTRIBUTES[kind])), kind))
            elif command.name == "LoadImage":
                for kind, attribute in _IMAGE_ATTRIBUTES.items():
                    if command.data and command.data == getattr(images, attribute):
                        self.loaded.append((command.n[0], len(command.data), kind))
                        break
        self.entries = [int.from_bytes(images.gpfifo[at:at + 8], "little") for at in range(0, len(images.gpfifo) - 7, 8)]

    def _launch(self, index) -> tuple:
        identity = next((x.get("identity") for x in self.manifest["launches"] if x.get("index") == index), "?")
        return self.launch_keys.get(index, f"launch[{index}]"), identity

    def address(self, address: int):
        """(place, words) of a mapped address inside an image, else None."""
        for start, size, kind in self.loaded:
            if start <= address < start + size:
                return self._in_image(kind, address - start)
        return None

    def _in_image(self, kind: int, offset: int):
        manifest = self.manifest
        sizes = manifest["sizes"]
        if kind == 1:
            for launch in manifest["launches"]:
                start = launch["parameter_offset"]
                if start <= offset < start + sizes["parameter_block"]:
                    key, identity = self._launch(launch["index"])
                    byte = offset - start - manifest["parameter_base"]
                    where = f"param+{byte:#x}" if byte >= 0 else f"{-byte:#x} bytes below the parameters"
                    return ("param", key, byte), f"launch[{launch['index']}] ({identity}) {where}"
        if kind == 2:
            for launch in manifest["launches"]:
                start = launch["qmd_offset"]
                if start <= offset < start + sizes["qmd_record"]:
                    key, identity = self._launch(launch["index"])
                    return ("qmd", key, offset - start), f"launch[{launch['index']}] ({identity})'s QMD +{offset - start:#x}"
        if kind == 3:
            for submission in manifest["submissions"]:
                start = submission["push_offset"]
                if start <= offset < start + submission["push_length"]:
                    return (("push", submission["index"], submission["identity"], offset - start),
                            f"submission[{submission['index']}] ({submission['identity']})'s segment +{offset - start:#x}")
        if kind == 4:
            entry = offset // 8
            return ("ring", entry, offset % 8), f"GPFIFO entry {entry}{self._submission_of(entry)} +{offset % 8:#x}"
        return ("image", kind, offset), f"the {KINDS[kind]} image +{offset:#x}"

    def _submission_of(self, entry: int) -> str:
        found = next((s for s in self.manifest["submissions"] if s.get("ring_entry") == entry), None)
        return f" (submission[{found['index']}] {found['identity']})" if found else ""

    def entry(self, value: int):
        """(place, words) of a ring entry value that is the GPFIFO image's entry e, else None."""
        if value in self.entries:
            entry = self.entries.index(value)
            return ("entry", entry), f"GPFIFO image entry {entry}{self._submission_of(entry)}"
        return None

    def fields(self, command) -> dict:
        """Each field of `command` that names an image place: ('n', i) or ('v', i) -> (place, words)."""
        out = {}
        if command.name == "LoadImage":        # its bytes are one of the images, compared field by field
            kind = next((k for k, a in _IMAGE_ATTRIBUTES.items() if command.data and command.data == getattr(self.images, a)), None)
            if kind is not None:
                out[("d", 0)] = ("loaded", kind), f"the {KINDS[kind]} image ({IMAGE_FILES[KINDS[kind]]})"
        for i in MAPPED_FIELDS.get(command.name, ()):
            if i < len(command.n):
                found = self.address(command.n[i])
                if found is not None:
                    out[("n", i)] = found
        for i, (kind, value) in enumerate(command.v):
            found = self.address(value) if kind == MAPPED_OPERAND else None
            if found is None and command.name == "Submit" and kind == 0:
                found = self.entry(value)       # the ring entry the Submit writes, an immediate
            if found is not None:
                out[("v", i)] = found
        return out


def _decoded(images, where):
    from ..native import program

    try:
        return program.decode(images.native_program)
    except program.ProgramError as error:
        raise BobcError(f"{where}: its native program ({images.manifest.get('native_program', {}).get('file')}) is "
                        f"refused: {error}", hint="write the images again with `bobc build --entry DEF --emit-images`") from None


def folder_lines(images, where="") -> list:
    """A native host's image folder's native program, command by command (`command[i] = ...`, as a
    native host's dump shows it), each field naming an image place noted with what it names
    (`# WriteMapped address: launch[7] (KERNEL) param+0x30`)."""
    from ..nvidia.decode import Line

    decoded = _decoded(images, where)
    places = _ImagePlaces(decoded.commands, images, {})
    out = [Line("native_program.identity", shown_identity(decoded.identity.rstrip(b"\0 ")), "", "", "header"),
           Line("native_program.commands", len(decoded.commands), "", "", "header")]
    for index, command in enumerate(decoded.commands):
        note = "; ".join(x for x in (_branches(command), _place_note(places.fields(command))) if x)
        out.append(Line(f"command[{index}]", _command_text(command), note, "", "command"))
    return out


_SIDES = {"n": "field", "v": "operand", "d": "bytes"}


def _place_note(found: dict) -> str:
    return "; ".join(f"{_SIDES[side]}{'' if side == 'd' else f' {i}'}: {words}"
                     for (side, i), (_, words) in sorted(found.items()))


def folder_differences(a, b, where_a="", where_b="") -> list:
    """Two native host image folders' native programs, their commands aligned as a sequence
    (aligned_commands, a field naming an image place read as the place): a command whose only
    differences are fields naming the same place of paired launches, submissions or ring entries
    (the images moved: a parameter block placed elsewhere, another target's parameter base, a
    longer segment's ring entry) is no difference, and one `native_program.mapped` line counts
    them; any other differing command is a line, noted with what its image fields name on each side."""
    from ..nvidia.golden import Difference, LaunchAlignment, _differences
    from ..nvidia.decode import Line
    from ..commands.diff import _index_runs

    if a.native_program is None or b.native_program is None:
        if a.native_program is b.native_program:
            return []
        side = "a" if a.native_program is not None else "b"
        return [Difference("native_program", "header", "", "a native host's program" if side == "a" else None,
                           "a native host's program" if side == "b" else None,
                           f"only {side} holds a native host's images (bobc build --entry DEF --emit-images)")]
    pa, pb = _decoded(a, where_a), _decoded(b, where_b)
    alignment = LaunchAlignment.of(a.manifest, b.manifest)
    places_a = _ImagePlaces(pa.commands, a, alignment.keys_a)
    places_b = _ImagePlaces(pb.commands, b, alignment.keys_b)
    head_a = [Line("native_program.identity", shown_identity(pa.identity.rstrip(b"\0 ")), "", "", "header"),
              Line("native_program.slots", pa.slots, "", "", "header"),
              Line("native_program.state_extent", pa.state_extent, "", "", "header"),
              Line("native_program.commands", len(pa.commands), "", "", "header")]
    head_b = [Line("native_program.identity", shown_identity(pb.identity.rstrip(b"\0 ")), "", "", "header"),
              Line("native_program.slots", pb.slots, "", "", "header"),
              Line("native_program.state_extent", pb.state_extent, "", "", "header"),
              Line("native_program.commands", len(pb.commands), "", "", "header")]
    found = _differences(head_a, head_b)
    moved = []
    fields_a = [places_a.fields(x) for x in pa.commands]
    fields_b = [places_b.fields(y) for y in pb.commands]
    paired_data: dict = {}          # each folded command's counterpart's bytes field
    # aligned on each command's fields with those naming an image place read as the place: a command
    # that only names the same place elsewhere is the same command of the sequence
    for i, j, key in aligned_commands(pa.commands, pb.commands, lambda i: _place_signature(pa.commands[i], fields_a[i]),
                                      lambda j: _place_signature(pb.commands[j], fields_b[j])):
        x = pa.commands[i] if i is not None else None
        y = pb.commands[j] if j is not None else None
        if x is None or y is None:
            found.append(Difference(key, "command", "", None if x is None else _command_text(x),
                                    None if y is None else _command_text(y), ""))
            continue
        if command_fields(x) == command_fields(y):
            continue
        fa, fb = fields_a[i], fields_b[j]
        if _same_but_places(x, y, fa, fb):
            moved.append(i)
            paired_data[i] = y.data
            continue
        notes = [f"{_SIDES[side]}{'' if side == 'd' else f' {k}'}: {fa[(side, k)][1] if (side, k) in fa else 'no image'} "
                 f"in a, {fb[(side, k)][1] if (side, k) in fb else 'no image'} in b"
                 for side, k in sorted(set(fa) | set(fb))
                 if (fa.get((side, k)) or (None,))[0] != (fb.get((side, k)) or (None,))[0] or
                 _field(x, side, k) != _field(y, side, k)]
        found.append(Difference(key, "command", "", _command_text(x), _command_text(y), "; ".join(notes)))
    if moved:
        # a LoadImage whose bytes differ loads the same image, changed (its lines above): not a move
        loads = [i for i in moved if pa.commands[i].data != paired_data[i]]
        addressed = [i for i in moved if i not in loads]
        count = len(moved)
        parts = []
        if addressed:
            parts.append(f"command[{_index_runs(addressed)}] (numbered as in a): each names, where a and b differ, the "
                         "same launch parameter word, QMD field, segment or ring entry of the paired launch or "
                         "submission, or loads the same image, compared field by field above (the images placed it "
                         "elsewhere, or the target's parameters start at another offset of constant bank 0), so only "
                         "its address or entry value differs")
        if loads:
            files = sorted({IMAGE_FILES[KINDS[fields_a[i][("d", 0)][0][1]]] for i in loads})
            parts.append(f"command[{_index_runs(loads)}] (numbered as in a): each loads the same image "
                         f"({', '.join(files)}) as its counterpart, whose bytes differ as the image lines above say")
        found.append(Difference("native_program.mapped", "command", "", f"{count} command{'s' if count != 1 else ''}",
                                "the same image places, moved" if addressed else "the same images, changed",
                                "; ".join(parts)))
    return found


def _field(command, side: str, i: int):
    if side == "d":
        return command.data
    values = command.n if side == "n" else command.v
    return values[i] if i < len(values) else None


def _same_but_places(x, y, fa: dict, fb: dict) -> bool:
    """Whether commands x and y differ only in fields that name the same image place on each side."""
    if (x.code, x.sub, len(x.n), len(x.v)) != (y.code, y.sub, len(y.n), len(y.v)):
        return False
    if x.data != y.data and (("d", 0) not in fa or ("d", 0) not in fb or fa[("d", 0)][0] != fb[("d", 0)][0]):
        return False
    for side, values_x, values_y in (("n", x.n, y.n), ("v", x.v, y.v)):
        for i, (p, q) in enumerate(zip(values_x, values_y)):
            if p == q:
                continue
            if side == "v" and p[0] != q[0]:
                return False
            if (side, i) not in fa or (side, i) not in fb or fa[(side, i)][0] != fb[(side, i)][0]:
                return False
    return True


def command_fields(command) -> tuple:
    """What a command's bytes hold: its code, operation, naturals, operands and bytes field.  Its
    children (Command.child) are not among them: a program's bytes are its commands in order, each
    command's children the ones that follow it (docs/platform.md), so two programs whose commands'
    fields are equal in order are the same bytes, and a child's index differs only because commands
    were inserted or removed before it, which the alignment shows as those commands."""
    return command.code, command.sub, tuple(command.n), tuple(command.v), command.data


def _place_signature(command, found: dict) -> tuple:
    """command_fields with each field that names an image place (_ImagePlaces.fields) read as the place."""
    n = tuple(("place", found[("n", i)][0]) if ("n", i) in found else x for i, x in enumerate(command.n))
    v = tuple((kind, ("place", found[("v", i)][0])) if ("v", i) in found else (kind, x)
              for i, (kind, x) in enumerate(command.v))
    data = ("place", found[("d", 0)][0]) if ("d", 0) in found else command.data
    return command.code, command.sub, n, v, data


def aligned_commands(a: list, b: list, signature_a=None, signature_b=None) -> list:
    """Two programs' commands aligned as a sequence, as host plan steps and launches are
    (golden.sequence_keys: difflib on each command's `signature_*(index)`, command_fields by
    default), then each run of commands between two pairs aligned again on the commands' kinds
    (code and operation), so a changed command is paired with its counterpart of the same kind and
    the others of the run are on one side: [(i, j, key)] in program order, j None for a command
    only in a (`command[i]`), i None for one only in b (`command[+j]`), else a's i paired with b's j
    (`command[i]`, or `command[i->j]` where commands inserted or removed before it moved it)."""
    from ..nvidia.golden import sequence_keys

    def pairs(index_a, index_b, signatures_a, signatures_b) -> list:
        keys_a, keys_b, _ = sequence_keys(index_a, index_b, signatures_a, signatures_b, "command", lambda p, q: False)
        of_key = {key: i for i, key in keys_a.items()}
        return [(of_key[keys_b[j]], j) for j in index_b if keys_b[j] in of_key]

    signature_a = signature_a or (lambda i: command_fields(a[i]))
    signature_b = signature_b or (lambda j: command_fields(b[j]))
    first = pairs(list(range(len(a))), list(range(len(b))), [signature_a(i) for i in range(len(a))],
                  [signature_b(j) for j in range(len(b))])
    out, next_a, next_b = [], 0, 0
    for i, j in first + [(len(a), len(b))]:
        gap_a, gap_b = list(range(next_a, i)), list(range(next_b, j))
        kind = lambda command: (command.code, command.sub)         # noqa: E731
        inner = pairs(gap_a, gap_b, [kind(a[k]) for k in gap_a], [kind(b[k]) for k in gap_b]) if gap_a and gap_b else []
        for p, q in inner + [(i, j)]:
            out += [(k, None, f"command[{k}]") for k in range(next_a, p)]
            out += [(None, k, f"command[+{k}]") for k in range(next_b, q)]
            if p < len(a):
                out.append((p, q, f"command[{p}]" if p == q else f"command[{p}->{q}]"))
            next_a, next_b = p + 1, q + 1
    return out


def differences(path_a, path_b, kernel_folders=()) -> list:
    """Two native hosts, fact by fact (lines): their headers and embedded images by key, their
    programs' commands aligned as a sequence (aligned_commands), so an inserted command is one
    line (`command[+j]: only in b`) and each one after it is compared with its counterpart.  Two
    hosts that carry their images' manifest (carried_images) are compared as two native hosts'
    image folders are -- the images field by field (golden.differences), the commands with each
    field naming an image place read as the place (folder_differences) -- after their version
    text, target, interpreter identity and program size and sha256."""
    from ..nvidia.golden import _differences, differences as image_differences

    images_a, images_b = carried_images(path_a), carried_images(path_b)
    if images_a is not None and images_b is not None:
        images_a.kernel_folders = images_b.kernel_folders = kernel_folders
        # the images' lines compare the manifest (its native_program: the program's size and sha256) and
        # the images; folder_differences the program's identity, slots, state and commands
        skip = ("host.manifest.", "program.bytes", "program.sha256", "program.identity", "program.slots",
                "program.state_extent", "program.commands", "embedded[")
        heads = [[line for line in lines(path, images) if not line.key.startswith(skip)]
                 for path, images in ((path_a, images_a), (path_b, images_b))]
        return (_differences(*heads) + image_differences(images_a, images_b)
                + folder_differences(images_a, images_b, path_a, path_b))
    found = _differences(*([line for line in lines(path) if line.kind != "command"] for path in (path_a, path_b)))
    return found + _command_differences(read(path_a)[1].commands, read(path_b)[1].commands)


def _command_differences(commands_a: list, commands_b: list) -> list:
    from ..nvidia.golden import Difference

    found = []
    for i, j, key in aligned_commands(commands_a, commands_b):
        x = commands_a[i] if i is not None else None
        y = commands_b[j] if j is not None else None
        if x is not None and y is not None and command_fields(x) == command_fields(y):
            continue
        found.append(Difference(key, "command", "", None if x is None else _command_text(x),
                                None if y is None else _command_text(y), ""))
    return found


def host_folder_differences(path_a, path_b, images, host_is_a: bool) -> list:
    """A native host that carries no manifest against a native host's image folder (`bobc build
    --entry DEF --emit-images`): each embedded image against the folder's file of its kind
    (`program.bin.sha256`), by size and sha256, and the two native programs' headers and commands, the
    commands aligned as a sequence (aligned_commands) -- so a host and the folder its build wrote
    hold the same images and commands.  `images`: the folder's (decode.load_images)."""
    from ..nvidia.decode import Line
    from ..nvidia.golden import _differences

    host_path, folder_path = (path_a, path_b) if host_is_a else (path_b, path_a)
    host, decoded, _ = read(host_path)
    folder_program = _decoded(images, folder_path)

    def facts(found: dict, program) -> list:
        out = []
        for kind in sorted(found):
            name = IMAGE_FILES[KINDS[kind]] if kind in KINDS else f"embedded[{kind}]"
            out += [Line(f"{name}.bytes", len(found[kind]), "", "", "header"),
                    Line(f"{name}.sha256", hashlib.sha256(found[kind]).hexdigest(), "", "", "header")]
        return out + [Line("native_program.identity", shown_identity(program.identity.rstrip(b"\0 ")), "", "", "header"),
                      Line("native_program.slots", program.slots, "", "", "header"),
                      Line("native_program.state_extent", program.state_extent, "", "", "header"),
                      Line("native_program.commands", len(program.commands), "", "", "header")]

    of_host = facts({kind: content for kind, _, content in host.components}, decoded)
    of_folder = facts({kind: getattr(images, attribute) for kind, attribute in _IMAGE_ATTRIBUTES.items()},
                      folder_program)
    (lines_a, program_a), (lines_b, program_b) = ((of_host, decoded), (of_folder, folder_program))[::1 if host_is_a else -1]
    return _differences(lines_a, lines_b) + _command_differences(program_a.commands, program_b.commands)
