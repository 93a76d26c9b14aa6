"""Reading an image folder back: QMD fields, methods, ring entries, parameter words, code.

The manifest says where each launch's QMD and parameter block and each
submission's segment lie; everything else is decoded from the bytes with the
same tables the encoder used (qmd.py, pushbuffer.py, gpfifo.py), so a dump
shows what the hardware will read, not what the encoder meant.
"""
from __future__ import annotations

import json
import struct
from dataclasses import dataclass
from pathlib import Path

from ..errors import BobcError, UsageError
from .. import nvtools
from ..bounded import BoundedCache
from ..resources import doc
from . import gpfifo, pushbuffer, qmd
from .classes import class_name
from .encode import IMAGE_FILES, Images

INSTRUCTION_BYTES = 16


# The most bytes `bobc dump`, `bobc diff` and `bobc disasm` read of any one file (a host, a
# manifest.json, an image): docs/limits.md's limit on any input file (1 GiB).  bobc writes far
# less: the certifier's bound of 65,536 launches gives at most 64 MiB of parameter blocks and
# 32 MiB of QMDs.
READ_LIMIT_BYTES = 1 << 30


def _refusal(named: str, part: str, detail: str) -> BobcError:
    if part == "size":
        detail += f" ({doc('limits.md')}: 1 GiB for any file bobc reads)"
    return UsageError(f"{named}: {detail}")


def read_bounded(path: str | Path) -> bytes:
    """The bytes of `path`, a regular file of at most READ_LIMIT_BYTES: opened without blocking
    (a FIFO never hangs it) and checked before it is read; else a UsageError (exit 2) naming
    the file and what it is."""
    from ..reference.safe_io import read_input

    return read_input(path, _refusal, READ_LIMIT_BYTES).data


def check_input(path: str | Path) -> None:
    """Refuse (UsageError, exit 2) a path that is not a regular file of at most READ_LIMIT_BYTES
    (a FIFO, a device, a socket, a huge file), without reading it and without blocking."""
    from ..reference import safe_io

    safe_io.check_input(path, _refusal, READ_LIMIT_BYTES)


def read_images(folder: str | Path) -> Images:
    """The images of a folder written by `bobc build --emit-images`."""
    import os

    folder = Path(folder)
    if folder.is_file():
        raise UsageError(f"{folder} is a file, not an image folder",
                         hint="pass a folder written by `bobc build --emit-images`, or use "
                              "`load_images` for a built host")
    if not folder.is_dir():
        raise UsageError(f"no such folder: {folder}")
    if not os.path.lexists(folder / "manifest.json"):
        raise UsageError(f"{folder} has no manifest.json; is it a `bobc build --emit-images` folder?")
    raw_manifest = read_bounded(folder / "manifest.json")
    try:
        text = raw_manifest.decode("utf-8")
    except UnicodeDecodeError as error:
        raise BobcError(f"cannot read {folder / 'manifest.json'}: {error}") from None
    data = {}
    for attribute, name in IMAGE_FILES.items():
        path = folder / name
        if not os.path.lexists(path):
            raise UsageError(f"{folder} has no {name}")
        data[attribute] = read_bounded(path)
    labels = {attribute: str(folder / name) for attribute, name in IMAGE_FILES.items()}
    images = _images(_parse_manifest(text, folder / "manifest.json"), data, folder, labels)
    images.manifest_bytes = ("manifest.json", raw_manifest)      # for diff's byte comparison
    images.native_program = _native_program(folder, images.manifest)
    return images


def _native_program(folder: Path, manifest: dict) -> bytes | None:
    """The native program a native host's image folder holds beside its images (the file the
    manifest's `native_program` names, checked against its size and sha256), else None."""
    import hashlib
    import os

    named = manifest.get("native_program")
    if named is None:
        return None
    from .encode import NATIVE_PROGRAM_FILE

    if named["file"] != NATIVE_PROGRAM_FILE:
        raise BobcError(f"{folder / 'manifest.json'}: native_program.file is {named['file']!r}, not "
                        f"{NATIVE_PROGRAM_FILE!r}", hint=REWRITE)
    path = folder / NATIVE_PROGRAM_FILE
    if not os.path.lexists(path):
        raise UsageError(f"{folder} has no {NATIVE_PROGRAM_FILE}, which its manifest names", hint=REWRITE)
    data = read_bounded(path)
    if len(data) != named["bytes"] or hashlib.sha256(data).hexdigest() != named["sha256"]:
        raise BobcError(f"{path} is {len(data)} bytes, sha256 {hashlib.sha256(data).hexdigest()[:16]}...; the "
                        f"manifest says {named['bytes']} bytes, sha256 {str(named['sha256'])[:16]}...", hint=REWRITE)
    return data


def host_sections(path: str | Path, data: bytes) -> dict[str, bytes]:
    """The .bobc.* sections of the host whose bytes are `data` (bobc.host.sections.read, on
    bytes read once and bounded)."""
    from ..host import sections

    found = {}
    for name, (start, size) in sections.spans(data, Path(path)).items():
        if start + size > len(data):
            raise sections.HostImageError(f"{path}: section {sections.PREFIX}{name} lies outside the file "
                                          f"({start + size} bytes of {len(data)})",
                                          hint="the host is cut short or damaged: copy it again, "
                                               "or rebuild it with `bobc build`")
        found[name] = data[start:start + size]
    if not found:
        raise sections.HostImageError(f"{path} carries no bobc images", hint="pass a host built by `bobc build`")
    return found


def load_images(path: str | Path) -> Images:
    """The images of an image folder or of a host built by `bobc build` (its .bobc.* sections).

    Every file is read once, bounded (a regular file of at most READ_LIMIT_BYTES), and a host
    whose images do not match its plan identity is refused as damaged (version.DamagedHost, exit 2)."""
    import os

    path = Path(path)
    if path.is_dir():
        return read_images(path)
    if not os.path.lexists(path):
        from ..errors import printable

        raise UsageError(f"no such image folder or host: {printable(path)}")
    check_input(path)
    with open(path, "rb") as handle:            # a regular file (checked): the open cannot block
        magic = handle.read(4)
    if magic != b"\x7fELF":
        raise UsageError(f"{path} is neither an image folder nor a host executable",
                         hint="pass a folder written by `bobc build --emit-images` or a host built by `bobc build`")
    from ..host import native, sections, version

    if native.is_native_host(path):
        raise UsageError(f"{path} is a native physical program host (`bobc build --entry`, {doc('native-host.md')}): "
                         "its device images are embedded after its program, not in a plan host's sections, "
                         "so they are not read as a plan host's image set here",
                         hint=f"`bobc dump {path}` lists its program's commands and its images' sizes and "
                              f"sha256, `bobc inspect {path}` summarizes it, `bobc diff` compares two such hosts")
    found = host_sections(path, read_bounded(path))
    rebuild = "the host is damaged or not bobc's: rebuild it with `bobc build`"
    missing = [f"section {sections.PREFIX}{a}" for a in IMAGE_FILES if a not in found]
    if missing:
        raise BobcError(f"{path} lacks {', '.join(missing)}", hint="rebuild the host with `bobc build`")
    version.check_images(path, found)       # the manifest too, where the version text records its sha256
    if "manifest" not in found:
        raise BobcError(f"{path} lacks section {sections.PREFIX}manifest", hint="rebuild the host with `bobc build`")
    manifest = host_manifest(path, found["manifest"],
                             version.recorded_identity(found.get(version.SECTION), version.MANIFEST_KEY) is not None)
    labels = {attribute: f"{path} section {sections.PREFIX}{attribute}" for attribute in IMAGE_FILES}
    images = _images(manifest, {a: found[a] for a in IMAGE_FILES}, path, labels, hint=rebuild)
    images.manifest_bytes = (f"section {sections.PREFIX}manifest", found["manifest"])
    return images


REWRITE = "write the images again with `bobc build --emit-images`"


def host_manifest(path, section: bytes, checked: bool = True) -> dict:
    """A plan host's .bobc.manifest section read as a manifest, or the host refused as damaged
    (exit 2, naming the section and what is wrong).  `checked`: the host checks the section at
    start (its version text records the manifest identity, version.check_images); a host built
    before that does not, and runs with a damaged manifest: the hint says so."""
    from ..host import sections, version

    hint = "the host is damaged or not bobc's: rebuild it with `bobc build`"
    if not checked:
        hint = ("its version text records no manifest identity (a bobc before that check built it), so the host "
                "itself does not check this section and still runs; bobc dump, diff and inspect cannot read its "
                "images: rebuild it with `bobc build`")
    try:
        return _parse_manifest(section.decode("utf-8", "replace"), f"{path} ({sections.PREFIX}manifest)",
                               hint=hint)
    except BobcError as error:
        raise version.DamagedHost(error.message, hint=error.hint) from None


def _parse_manifest(text: str, where, hint: str = REWRITE) -> dict:
    try:
        manifest = json.loads(text)
    except json.JSONDecodeError as error:
        raise BobcError(f"{where} is not JSON: {error}",
                        hint=hint) from None
    missing = [key for key in MANIFEST_KEYS if key not in manifest] if isinstance(manifest, dict) else None
    if missing is None or missing:
        lacks = f"it lacks {', '.join(missing)}" if missing else "it is not a JSON object"
        raise BobcError(f"{where} is not a bobc image manifest: {lacks}",
                        hint=hint)
    problems = _manifest_shape_problems(manifest)
    if problems:
        raise BobcError(f"{where} is not a well-formed bobc image manifest: {'; '.join(problems[:3])}"
                        + (f" (and {len(problems) - 3} more)" if len(problems) > 3 else ""),
                        hint=hint)
    return manifest


@dataclass(frozen=True)
class _Number:
    """A JSON integer (never a boolean) in lo..hi, called `what` in a refusal."""

    lo: int
    hi: int
    what: str


@dataclass(frozen=True)
class _List:
    """A JSON list of `item`s, of exactly `length` of them when given."""

    item: object
    length: int | None = None


@dataclass(frozen=True)
class _Object:
    """A JSON object: key -> (its kind, whether it must be there).  Keys not declared are not
    read by any reader (dump shows them as they are) and are not judged."""

    fields: dict


WORD = _Number(0, (1 << 32) - 1, "a 32-bit word (0..0xffffffff)")
ADDRESS = _Number(0, (1 << 64) - 1, "a 64-bit address (0..0xffffffffffffffff)")
U64 = _Number(0, (1 << 64) - 1, "a 64-bit word (0..0xffffffffffffffff)")
BYTES = _Number(0, (1 << 63) - 1, "a byte count or offset (0..2^63-1)")
POSITIVE = _Number(1, (1 << 63) - 1, "a positive byte count (1..2^63-1)")
INDEX = _Number(0, (1 << 32) - 1, "an index (0..0xffffffff)")
SIZE3 = _List(WORD, 3)              # a grid, a block, a cluster: x, y, z

R, O = True, False                  # required, optional

# The manifest `bobc build --emit-images` writes (nvidia.encode.encode_images), every key with
# its kind: the one table the shape check walks (_shape_problems), so no reader of a manifest
# (dump, diff, sim --images, inspect) meets a value of another type or out of its range.
MANIFEST_SCHEMA = _Object({
    "format": (str, O), "target": (str, R), "qmd_layout": (str, R), "nvdisasm_arch": (str, O), "plan": (str, O),
    "compute_class": (WORD, R), "plan_compute_class": (WORD, O),
    "parameter_base": (BYTES, R), "plan_parameter_base": (BYTES, O),
    "bases": (_Object({name: (ADDRESS, O) for name in ("program", "qmd", "pushbuffer", "semaphore")}), R),
    "sizes": (_Object({"program": (BYTES, O), "code": (BYTES, O), "parameter_block": (POSITIVE, R),
                       "qmd": (BYTES, O), "qmd_record": (POSITIVE, R), "pushbuffer": (BYTES, O),
                       "gpfifo": (BYTES, O), "semaphore": (BYTES, O)}), R),
    "plan_sizes": (_Object({"program": (BYTES, O), "qmd": (BYTES, O)}), O),
    "regions": (_List(_Object({
        "index": (INDEX, R), "identity": (str, R), "plan_place": (BYTES, O), "place": (BYTES, R),
        "address": (ADDRESS, R), "size": (BYTES, R), "registers": (WORD, O), "qmd_registers": (WORD, O),
        "block_x": (WORD, O), "shared_bytes": (BYTES, O)})), R),
    "pruned_regions": (_List(INDEX), O),
    "launches": (_List(_Object({
        "index": (INDEX, R), "identity": (str, R), "region": (INDEX, R), "program_address": (ADDRESS, O),
        "parameter_offset": (BYTES, R), "parameter_address": (ADDRESS, O), "qmd_offset": (BYTES, R),
        "qmd_address": (ADDRESS, O), "grid": (SIZE3, O), "block": (SIZE3, O), "cluster": (SIZE3, O),
        "schedules": (_List(INDEX), O)})), R),
    "submissions": (_List(_Object({
        "index": (INDEX, R), "identity": (str, R), "launches": (_List(INDEX), O), "ring_entry": (INDEX, O),
        "push_offset": (BYTES, R), "push_length": (BYTES, R), "push_address": (ADDRESS, O),
        "semaphore_offset": (BYTES, O), "semaphore_address": (ADDRESS, O)})), R),
    "prologue": (_Object({
        "push_offset": (BYTES, R), "push_length": (BYTES, R), "push_address": (ADDRESS, O),
        "gpfifo_entry": (_List(WORD, 2), R), "compute_subchannel": (WORD, O), "host_subchannel": (WORD, O),
        "shared_memory_window": (ADDRESS, O), "local_memory_window": (ADDRESS, O),
        "local_memory_base": (ADDRESS, O), "local_memory_size": (BYTES, O)}), R),
    "semaphore": (_Object({"payload": (U64, O), "bytes": (BYTES, O), "layout": (str, O),
                           "execute": (WORD, O)}), O),
    "pcas_action": (str, O), "dependent_qmd_action": (str, O),
    "residence": (_Object({
        "base": (ADDRESS, R), "bytes": (BYTES, R), "program_bytes": (BYTES, O),
        "stage": (_Object({
            "identity": (str, R), "push_offset": (BYTES, R), "bytes": (BYTES, R), "qmd_address": (ADDRESS, R),
            "parameter_address": (ADDRESS, R), "program_address": (ADDRESS, R), "grid": (SIZE3, O),
            "block": (SIZE3, O), "units": (WORD, O), "registers": (WORD, O)}), R)}), O),
    "native_program": (_Object({"file": (str, R), "bytes": (BYTES, R), "sha256": (str, R)}), O),
    "tensor_maps": (_List(_Object({
        "slot": (INDEX, R), "offset": (BYTES, R), "address": (ADDRESS, R), "bytes": (BYTES, R),
        "data_type": (str, O), "global_address": (ADDRESS, O), "dims": (_List(U64), O),
        "strides": (_List(U64), O), "box": (_List(WORD), O), "swizzle": (str, O),
        "users": (_List(_Object({"launch": (INDEX, R), "argument": (INDEX, R)})), O)})), O),
})

# The top-level keys every manifest must carry (the required ones of MANIFEST_SCHEMA).
MANIFEST_KEYS = tuple(key for key, (_, required) in MANIFEST_SCHEMA.fields.items() if required)

_JSON_NAMES = {str: "a string", int: "an integer", float: "a number", bool: "a boolean", list: "a list",
               dict: "an object", type(None): "null"}


def _json_name(value) -> str:
    return _JSON_NAMES.get(type(value), type(value).__name__)


def _shape_problems(value, kind, path: str) -> list[str]:
    """What is wrong with `value` as a `kind` of MANIFEST_SCHEMA at `path`, one phrase each."""
    if isinstance(kind, _Number):
        if not isinstance(value, int) or isinstance(value, bool):
            return [f"{path} is {_json_name(value)}, not {kind.what}"]
        if not kind.lo <= value <= kind.hi:
            return [f"{path} is {value}, not {kind.what}"]
        return []
    if isinstance(kind, _List):
        if not isinstance(value, list):
            return [f"{path} is {_json_name(value)}, not a list"]
        if kind.length is not None and len(value) != kind.length:
            return [f"{path} has {len(value)} items, not {kind.length}"]
        return [p for i, item in enumerate(value) for p in _shape_problems(item, kind.item, f"{path}[{i}]")]
    if isinstance(kind, _Object):
        if not isinstance(value, dict):
            return [f"{path} is {_json_name(value)}, not an object"]
        out = []
        for key, (inner, required) in kind.fields.items():
            where = f"{path}.{key}" if path else key
            if key not in value:
                if required:
                    out.append(f"{where} is missing")
                continue
            out += _shape_problems(value[key], inner, where)
        return out
    if not isinstance(value, kind):
        return [f"{path} is {_json_name(value)}, not {_JSON_NAMES[kind]}"]
    return []


def _manifest_shape_problems(manifest: dict) -> list[str]:
    """Every key of MANIFEST_SCHEMA whose value has the wrong JSON type or lies outside its range,
    and an index two entries share, so no reader meets a surprise."""
    out = _shape_problems(manifest, MANIFEST_SCHEMA, "")
    if out:
        return out
    for name in ("regions", "launches", "submissions"):
        seen: dict[int, int] = {}
        for position, item in enumerate(manifest[name]):
            if item["index"] in seen:
                out.append(f"{name}[{position}].index is {item['index']}, as {name}[{seen[item['index']]}].index is")
            seen.setdefault(item["index"], position)
    if manifest["qmd_layout"] not in qmd.LAYOUTS:
        out.append(f"qmd_layout {manifest['qmd_layout']!r} is none of {', '.join(sorted(qmd.LAYOUTS))}")
    arch = manifest.get("nvdisasm_arch")
    if arch is not None:            # what encode_images writes: the target's own Target.nvdisasm_arch
        from ..targets import TARGETS

        target = TARGETS.get(manifest["target"])
        known = sorted(t.nvdisasm_arch for t in TARGETS.values())
        if target is not None and arch != target.nvdisasm_arch:
            out.append(f"nvdisasm_arch {arch!r} is not target {target.name}'s ({target.nvdisasm_arch!r})")
        elif arch not in known:
            out.append(f"nvdisasm_arch {arch!r} is none of {', '.join(known)}")
    if manifest["parameter_base"] >= manifest["sizes"]["parameter_block"]:
        out.append(f"parameter_base {manifest['parameter_base']:#x} is not inside the "
                   f"{manifest['sizes']['parameter_block']}-byte parameter block (sizes.parameter_block)")
    return out


def _images(manifest: dict, data: dict[str, bytes], where, labels: dict[str, str], hint: str = REWRITE) -> Images:
    """Images checked against the manifest's sizes and every offset it gives."""
    images = Images(manifest=manifest, **data)
    sizes = manifest["sizes"]
    for attribute, key in (("program", "program"), ("qmd", "qmd"), ("push", "pushbuffer"), ("gpfifo", "gpfifo")):
        if key in sizes and sizes[key] != len(data[attribute]):
            raise BobcError(f"{labels[attribute]} is {len(data[attribute])} bytes; the manifest says {sizes[key]}",
                            hint=hint)
    if len(data["gpfifo"]) % gpfifo.ENTRY_BYTES:      # named here: gpfifo.decode's refusal names no file
        raise BobcError(f"{labels['gpfifo']} is {len(data['gpfifo']):,} bytes: not whole "
                        f"{gpfifo.ENTRY_BYTES}-byte GPFIFO entries", hint=hint)
    spans = [(f"region {r['index']} code", "program", r["place"], r["size"]) for r in manifest["regions"]]
    for launch in manifest["launches"]:
        spans.append((f"launch {launch['index']} QMD", "qmd", launch["qmd_offset"], sizes["qmd_record"]))
        spans.append((f"launch {launch['index']} parameter block", "program", launch["parameter_offset"],
                      sizes["parameter_block"]))
    for s in [manifest["prologue"] | {"index": "prologue"}, *manifest["submissions"]]:
        spans.append((f"submission {s['index']} pushbuffer segment", "push", s["push_offset"], s["push_length"]))
    residence = manifest.get("residence")
    if residence is not None:       # the stage lies in the pushbuffer's appendix (stage_lines reads it there)
        stage, base = residence["stage"], manifest["bases"].get("pushbuffer")
        if base is None:
            raise BobcError(f"{where}: the manifest has a residence but no bases.pushbuffer, where its stage lies",
                            hint=hint)
        spans += [("residence stage's QMD", "push", stage["qmd_address"] - base, sizes["qmd_record"]),
                  ("residence stage's parameter block", "push", stage["parameter_address"] - base,
                   sizes["parameter_block"]),
                  ("residence stage's code", "push", stage["program_address"] - base,
                   stage["push_offset"] + stage["bytes"] - (stage["program_address"] - base))]
        if manifest["parameter_base"] + 8 * len(STAGE_ARGUMENTS) > sizes["parameter_block"]:
            raise BobcError(f"{where}: the manifest's parameter_base {manifest['parameter_base']:#x} leaves no room "
                            f"for the residence stage's {len(STAGE_ARGUMENTS)} parameters in the "
                            f"{sizes['parameter_block']}-byte parameter block", hint=hint)
    for label, attribute, offset, length in spans:
        if offset < 0 or length < 0 or offset + length > len(data[attribute]):
            raise BobcError(f"{where}: the manifest puts the {label} at {offset:#x}..{offset + length:#x}, "
                            f"outside the {len(data[attribute])} bytes of {labels[attribute]}",
                            hint=hint)
    regions = {r["index"] for r in manifest["regions"]}
    for launch in manifest["launches"]:
        if launch["region"] not in regions:
            raise BobcError(f"{where}: launch {launch['index']} names region {launch['region']}, "
                            "which the manifest does not list", hint=hint)
    return images


def qmd_fields(images: Images, launch: int) -> list[tuple[str, int]]:
    entry = images.manifest["launches"][launch]
    record = images.manifest["sizes"]["qmd_record"]
    raw = images.qmd[entry["qmd_offset"]:entry["qmd_offset"] + record]
    return qmd.decode(images.manifest["qmd_layout"], raw)


def parameter_block(images: Images, launch: int) -> bytes:
    entry = images.manifest["launches"][launch]
    size = images.manifest["sizes"]["parameter_block"]
    return images.program[entry["parameter_offset"]:entry["parameter_offset"] + size]


def parameter_words(images: Images, launch: int) -> list[tuple[int, int]]:
    """(bank 0 byte offset, value) of every non-zero 8-byte word of the launch's block."""
    block = parameter_block(images, launch)
    words = struct.unpack(f"<{len(block) // 8}Q", block)
    return [(8 * i, w) for i, w in enumerate(words) if w]


def push_segments(images: Images) -> list[tuple[str, list[pushbuffer.Method]]]:
    """The prologue's methods, then each submission's, decoded in stream order."""
    manifest = images.manifest
    bindings: dict[int, str] = {}
    segments = []
    spans = [("prologue", manifest["prologue"]["push_offset"], manifest["prologue"]["push_length"])]
    spans += [(f"submission {s['index']} ({s['identity']})", s["push_offset"], s["push_length"])
              for s in manifest["submissions"]]
    for label, offset, length in spans:
        raw = images.push[offset:offset + length]
        segments.append((label, pushbuffer.decode(raw, bindings, base=offset)))
    return segments


def ring_entries(images: Images) -> list[gpfifo.Entry]:
    return gpfifo.decode(images.gpfifo)


def region_code(images: Images, region: dict) -> bytes:
    return images.program[region["place"]:region["place"] + region["size"]]


def disassemble(code: bytes, arch: str, base: int = 0) -> str | None:
    """nvdisasm's text for a raw instruction stream, or None when nvdisasm is not installed."""
    tool = nvtools.nvdisasm()
    if tool is None:
        return None
    # kept in the user cache; a full disk or `ulimit -f`: one message, exit 8
    done = nvtools.run_on_code(tool, ["-b", arch, "--base-address", hex(base)], code)
    if done.returncode != 0 or done.stderr.strip():
        return f"nvdisasm failed ({done.returncode}): {done.stderr.strip()}\n{done.stdout}"
    return done.stdout


# ---------------------------------------------------------------- self-describing lines

# The words below the parameters in bank 0, as encode.parameter_block writes them (the CUDA
# driver's layout, shared/docs/nvidia-driver-facts.md section 5): offset -> meaning.
DRIVER_WORDS = {
    0x00: "block x (low u32), block y (high u32)",
    0x08: "block z (low u32), grid x (high u32)",
    0x10: "grid y (low u32), grid z (high u32)",
    0x18: "shared memory window",
    0x20: "local memory window",
    0x28: "stack pointer",
}


@dataclass(frozen=True)
class Line:
    """One decoded fact: `key = value` (a self-describing path), what the value means, whose it is."""

    key: str               # launch[5].qmd.CTA_THREAD_DIMENSION0
    value: object          # int, str, or a list of ints
    note: str = ""         # the value's meaning (argument name, method meaning, control code and text)
    owner: str = ""        # whose fact: a kernel or submission identity, "prologue", "" for the manifest
    kind: str = ""         # header, region, launch, qmd, bank0, push, gpfifo, code
    slot: str = ""         # what a diff matches on when the key also names the value (a method's name)
    where: str = ""        # where the value lies in its image (a method's subchannel and header offset)
    raw: object = None     # image bits the fact rests on besides its value, compared by a diff too
                           # (a method's header dword: its subchannel, SEC_OP, count, bit 12)
    spans: tuple = ()      # (image, first bit, bit count) of every image bit the value and raw hold,
                           # counted from the image's first byte: what a diff's byte check knows is shown

    @property
    def match(self) -> str:
        return self.slot or self.key

    def value_text(self) -> str:
        return format_value(self.value, self.kind)

    def text(self) -> str:
        line = f"{self.key} = {self.value_text()}"
        comment = "; ".join(part for part in (self.note, self.where) if part)
        return f"{line}  # {comment}" if comment else line

    def as_json(self) -> dict:
        return {"key": self.key, "kind": self.kind, "value": self.value, "note": self.note, "where": self.where}


def format_value(value, kind: str = "") -> str:
    if kind == "code" and isinstance(value, list):  # an instruction's two 64-bit words, as nvdisasm -hex has them
        return " ".join(f"{word:#018x}" for word in value)
    if isinstance(value, bool) or value is None:
        return str(value).lower() if isinstance(value, bool) else "absent"
    if isinstance(value, int):
        return f"{value:#x}"
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(format_value(v) for v in value) + "]"
    return str(value)


def nvdisasm_arch(manifest: dict) -> str:
    from ..targets import TARGETS

    arch = manifest.get("nvdisasm_arch")
    if isinstance(arch, str):
        return arch
    target = TARGETS.get(manifest["target"])
    if target is None:
        raise BobcError(f"the manifest's target {manifest['target']!r} is none bobc knows, and it names no "
                        "nvdisasm_arch")
    return target.nvdisasm_arch


# argument_names' key for why the kernel search gave no contract although it found a source (two
# copies under one folder, a contract line that does not parse): said in place of "no NAME.sass found",
# which told a user whose -I folder holds the file to pass -I with it (probe s45 determinism3 finding 2)
UNREAD = -1


def argument_names(kernel: str, target, folders=()) -> dict[int, str]:
    """Argument index -> what it holds, from the kernel's contract (the `//@ param` lines of
    its source for `target`, a Target or its name, found in `folders` -- a plan's own kernel
    folders, `bobc dump -I DIR` -- then the standard library: bobc.kernel_search,
    certify/kernels.py); none when not found, and only UNREAD -> why when a source was found
    but gives none (the search refused two copies, or its contract does not parse)."""
    return dict(_contract_names(kernel, target, tuple(str(f) for f in folders)))


def _contract_names(kernel: str, target, folders: tuple[str, ...] = ()) -> tuple[tuple[int, str], ...]:
    from ..certify.kernels import ContractError, find_source, parse_contract
    from ..kernel_search import SourceError
    from ..language.modules import specs_folder

    try:
        source = find_source(kernel, [*folders, specs_folder()], target)
        if source is None:
            return ()
        contract = parse_contract(source, kernel)
    except SourceError as error:        # two copies under one folder: which one is meant is not certain
        return ((UNREAD, f"{error.message}; {error.hint}" if error.hint else error.message),)
    except ContractError as error:
        return ((UNREAD, f"its contract does not parse: {error}"),)
    except ValueError:      # a manifest's target of no target's shape
        return ()
    return tuple((a.index, f"argument {a.index}: {a.what} ({a.kind}{', ' + a.access if a.access else ''})")
                 for a in contract.arguments)


def cluster_words(layout: str) -> dict[int, str]:
    """The 8-byte bank 0 words that say a launch's thread-block cluster, on a target whose QMD
    layout has clusters (encode.ClusterLaunch's u32 offsets, paired into words)."""
    from .encode import RECIPES

    recipe = RECIPES.get(layout)
    how = recipe.cluster if recipe is not None else None
    if how is None:
        return {}
    halves = {how.bank_explicit: "explicit cluster", how.bank_blocks: "blocks a cluster"}
    for i, axis in enumerate("xyz"):
        halves[how.bank_shape + 4 * i] = f"cluster {axis}"
        halves[how.bank_clusters + 4 * i] = f"clusters {axis}"
    words: dict[int, list[str]] = {}
    for offset, name in sorted(halves.items()):
        words.setdefault(offset & ~7, []).append(f"{name} ({'high' if offset % 8 else 'low'} u32)")
    return {offset: ", ".join(parts) for offset, parts in words.items()}


def bank0_meaning(manifest: dict, kernel: str, offset: int, names: dict[int, str] | None = None) -> str:
    """What bank 0 word `offset` of a launch of `kernel` is: a driver word or a named argument
    (`names`: argument_names(kernel, target), when the caller has them already)."""
    if offset in DRIVER_WORDS:
        return DRIVER_WORDS[offset]
    cluster = cluster_words(manifest.get("qmd_layout", ""))
    if offset in cluster:
        return cluster[offset]
    base = manifest["parameter_base"]
    if offset < base:
        return "below the parameters (unused)"
    index = (offset - base) // 8
    if names is None:
        names = argument_names(kernel, manifest["target"])
    arguments = {at: text for at, text in names.items() if at != UNREAD}
    if index in arguments:
        return arguments[index]
    if arguments:
        return f"argument {index} (past {kernel}'s {len(arguments)} arguments)"
    if UNREAD in names:
        return f"parameter word {index} (the kernel's argument names unknown: {names[UNREAD]})"
    # the folder to pass, by the file's name (bobc.kernel_search.find_source): a bare "pass -I" was
    # said even when -I named a folder without it (probe s40 newuser4 finding 2)
    return (f"parameter word {index} (the kernel's argument names unknown: no {kernel}.sass found; "
            f"pass -I with the folder that holds it)")


def header_lines(images: Images) -> list[Line]:
    """The manifest's scalar facts (regions, launches and submissions come with their own lines)."""
    m = images.manifest
    out = []
    flat = _flat({k: v for k, v in m.items() if k not in ("regions", "launches", "submissions")})
    for key, value in flat.items():
        if key == "prologue.gpfifo_entry":
            continue  # decoded with the ring's entries (ring_lines)
        note = class_name(value) if key in ("compute_class", "plan_compute_class") and isinstance(value, int) else ""
        out.append(Line(key, value, note, "", "header"))
    return out


def region_lines(images: Images) -> list[Line]:
    out = []
    for r in images.manifest["regions"]:
        owner = r["identity"]
        for key, value in r.items():
            if key != "index":
                out.append(Line(f"region[{r['index']}].{key}", value, "", owner, "region"))
    return out


def submission_lines(images: Images) -> list[Line]:
    """What the manifest says of each submission: its launches, segment, ring entry, semaphore."""
    out = []
    for s in images.manifest["submissions"]:
        for key, value in s.items():
            if key != "index":
                out.append(Line(f"submission[{s['index']}].{key}", value, "", s["identity"], "submission"))
    return out


def launch_lines(images: Images, nonzero_only: bool = False, zero_words: bool = False) -> list[Line]:
    """Each launch: its kernel, the grid and block its QMD holds, every QMD field (or the non-zero
    ones), and its bank 0 words (the non-zero ones, unless `zero_words`)."""
    from .encode import RECIPES

    m = images.manifest
    recipe = RECIPES.get(m["qmd_layout"])
    out = []
    by_qmd = {launch.get("qmd_address"): launch for launch in m["launches"]}
    names: dict[str, dict[int, str]] = {}           # kernel -> its argument names, looked up once
    for launch in m["launches"]:
        i, owner = launch["index"], launch["identity"]
        prefix = f"launch[{i}]"
        fields = dict(qmd_fields(images, m["launches"].index(launch)))
        out.append(Line(f"{prefix}.kernel", launch["identity"], f"region {launch['region']}", owner, "launch"))
        if recipe is not None:
            how = recipe.cluster
            clustered = how is not None and fields.get(how.qmd_type[0]) == how.qmd_type[1]
            cluster = [fields[n] for n in how.shape] if clustered else [1, 1, 1]
            shown = [("grid", [fields[n] * c for n, c in zip(recipe.grid, cluster)],     # the QMD counts clusters
                      f"from the QMD's {', '.join(recipe.grid)}"
                      + (f" (clusters) times its {', '.join(how.shape)}" if clustered else "")),
                     ("block", [fields[n] for n in recipe.block], f"from the QMD's {', '.join(recipe.block)}")]
            if clustered or "cluster" in launch:
                shown.append(("cluster", cluster, f"from the QMD's {', '.join(how.shape) if clustered else 'QMD_TYPE'}"))
            for name, value, where in shown:
                declared = launch.get(name)
                note = ""
                if isinstance(declared, list) and declared != value:
                    note = f"the manifest says {format_value(declared)}"
                out.append(Line(f"{prefix}.{name}", value, note, owner, "launch", where=where))
            region = next((r for r in m["regions"] if r["index"] == launch["region"]), {})
            registers = fields.get(recipe.registers)
            note = ""
            if isinstance(region.get("qmd_registers"), int) and region["qmd_registers"] != registers:
                note = f"region {launch['region']}'s manifest entry says {region['qmd_registers']}"
            out.append(Line(f"{prefix}.registers", registers, note, owner, "launch",
                            where=f"from the QMD's {recipe.registers}"))
            declared = launch.get("schedules", [])
            for slot, (enable, _action, _prefetch, pointer) in enumerate(recipe.dependents):
                if not fields.get(enable):
                    continue
                address = fields.get(pointer, 0) << 8
                named = by_qmd.get(address)
                value = f"launch {named['index']} ({named['identity']})" if named else f"the QMD at {address:#x}"
                note = ""
                if named is None:
                    note = "no launch's QMD is there"
                elif slot >= len(declared) or declared[slot] != named["index"]:
                    note = f"the manifest says {declared}"
                out.append(Line(f"{prefix}.schedules[{slot}]", value, note, owner, "launch",
                                where=f"when its grid ends (the QMD's {enable}, {pointer})"))
            how = recipe.programmatic
            if how is not None and fields.get(how.arrive[0]):
                out.append(Line(f"{prefix}.arrives_at_latch", fields.get(how.arrive[1], 0),
                                "its dependent starts when its last block exits" if fields.get(how.pre_exit) else "",
                                owner, "launch", where=f"when its writes are flushed (the QMD's {', '.join(how.arrive)})"))
            if how is not None and fields.get(how.wait[0]):
                out.append(Line(f"{prefix}.waits_on_latch", fields.get(how.wait[1], 0),
                                "ACQBULK holds its blocks until then", owner, "launch",
                                where=f"the QMD's {', '.join(how.wait)}"))
        for key in ("program_address", "qmd_address", "parameter_address"):
            if key in launch:
                out.append(Line(f"{prefix}.{key}", launch[key], "", owner, "launch"))
        table = qmd.LAYOUTS[m["qmd_layout"]].fields
        at = 8 * launch["qmd_offset"]
        for name, value in fields.items():
            if value or not nonzero_only:
                high, low = table[name]
                out.append(Line(f"{prefix}.qmd.{name}", value, "", owner, "qmd",
                                spans=(("qmd", at + low, high - low + 1),)))
        block = parameter_block(images, m["launches"].index(launch))
        at = 8 * launch["parameter_offset"]
        for k, word in enumerate(struct.unpack(f"<{len(block) // 8}Q", block)):
            if word or zero_words:
                if launch["identity"] not in names:
                    names[launch["identity"]] = argument_names(launch["identity"], m["target"],
                                                               getattr(images, "kernel_folders", ()))
                out.append(Line(f"{prefix}.bank0[{8 * k:#x}]", word,
                                bank0_meaning(m, launch["identity"], 8 * k, names[launch["identity"]]), owner, "bank0",
                                spans=(("program", at + 64 * k, 64),)))
    return out


def push_lines(images: Images) -> list[Line]:
    """Each segment's methods (the prologue's, then each submission's), keyed by the segment and
    the method's place in it (`submission[3].push[1].SEND_PCAS_A`), so a diff compares a
    submission's own methods wherever its segment lies."""
    out = []
    m = images.manifest
    segments = push_segments(images)
    owners = ["prologue"] + [s["identity"] for s in m["submissions"]]
    keys = ["prologue"] + [f"submission[{s['index']}]" for s in m["submissions"]]
    for (_, methods), owner, key in zip(segments, owners, keys):
        previous, position = None, 0
        for k, method in enumerate(methods):
            position = position + 1 if method.offset == previous else 0    # the header's n-th write
            previous = method.offset
            head = int.from_bytes(images.push[method.offset:method.offset + 4], "little")
            spans = [("push", 8 * method.offset, 32)] if position == 0 else []   # the header: its first write's
            if method.sec_op != "IMMD_DATA_METHOD":                         # its data dword
                spans.append(("push", 8 * (method.offset + 4 + 4 * position), 32))
            high, low = pushbuffer.HEADER_FIELDS["BIT12"]
            bit12 = ", header bit 12 set" if head >> low & 1 else ""
            out.append(Line(f"{key}.push[{k}].{method.name}", method.data, method.meaning, owner, "push",
                            slot=f"{key}.push[{k}]",
                            where=f"subch {method.subchannel} {method.sec_op}, header at push +{method.offset:#x}"
                                  + bit12,
                            raw=head if position == 0 else None, spans=tuple(spans)))
    return out


def header_change(a: int, b: int) -> str:
    """What differs between two method header dwords, field by field (pushbuffer.HEADER_FIELDS)."""
    parts = []
    for name, (high, low) in pushbuffer.HEADER_FIELDS.items():
        mask = (1 << (high - low + 1)) - 1
        x, y = a >> low & mask, b >> low & mask
        if x != y:
            if name == "SEC_OP":
                parts.append(f"SEC_OP {pushbuffer.SecOp(x).name} -> {pushbuffer.SecOp(y).name}")
            else:
                parts.append(f"{name} {x:#x} -> {y:#x}" if name in ("ADDRESS", "COUNT") else f"{name} {x} -> {y}")
    return f"header {a:#010x} -> {b:#010x} ({', '.join(parts)})"


def _entry_dwords(raw: bytes) -> list[int]:
    return [int.from_bytes(raw[:4], "little"), int.from_bytes(raw[4:8], "little")]


def describe_entry(raw: bytes) -> str:
    """A ring entry's fields in words, every bit of it: its address, length, level and sync, and
    FETCH or bit 1 of its first dword when set (gpfifo.FIELDS)."""
    entry = gpfifo.decode_entry(raw)
    text = entry.describe()
    dwords = _entry_dwords(raw)
    for name in ("FETCH", "ENTRY0_BIT1", "PRIV"):
        index, high, low = gpfifo.FIELDS[name]
        if dwords[index] >> low & ((1 << (high - low + 1)) - 1):
            text += {"FETCH": " fetch CONDITIONAL", "ENTRY0_BIT1": " bit 1 set (no field)",
                     "PRIV": " priv 1"}[name]
    return text


def ring_lines(images: Images) -> list[Line]:
    """The prologue's entry (in the manifest), then each ring entry: its two dwords as the image
    holds them (every bit, bits 1:0 included) and their fields in words.  An entry a submission
    names is matched by a diff on that submission (`submission[3].gpfifo`), not on its place."""
    m = images.manifest
    prologue = _dwords_bytes(m["prologue"]["gpfifo_entry"])
    out = [Line("prologue.gpfifo_entry", _entry_dwords(prologue), describe_entry(prologue), "prologue", "gpfifo")]
    by_ring = {s.get("ring_entry", s["index"]): s for s in m["submissions"]}
    raw = images.gpfifo
    if len(raw) % gpfifo.ENTRY_BYTES:
        gpfifo.decode(raw)      # its refusal
    for index in range(len(raw) // gpfifo.ENTRY_BYTES):
        entry = raw[gpfifo.ENTRY_BYTES * index:gpfifo.ENTRY_BYTES * (index + 1)]
        s = by_ring.get(index)
        out.append(Line(f"gpfifo[{index}]", _entry_dwords(entry), describe_entry(entry),
                        s["identity"] if s else "", "gpfifo", slot=f"submission[{s['index']}].gpfifo" if s else "",
                        where=f"submission {s['index']}'s segment" if s else "no submission names it",
                        spans=(("gpfifo", 64 * index, 64),)))
    return out


NOT_INSTALLED = "(nvdisasm not installed)"
# Said once per command on stderr when an instruction line ends in NOT_INSTALLED (`bobc dump`,
# `bobc diff`, which call new_command first): the lines keep their shape, the user learns why they
# carry no text.  Once per process, a second command of a process that lives on said nothing
# (probe s36 inprocess2 finding 4).
NOT_INSTALLED_NOTICE = ("bobc: note: nvdisasm is not installed, so instruction lines end in "
                        f"{NOT_INSTALLED} instead of its text; pip install nvidia-cuda-nvdisasm "
                        "(Linux x86_64 or aarch64), or set BOBC_NVDISASM to an nvdisasm")
_noticed = False


def new_command() -> None:
    """A command that may print instruction lines begins: its lines say NOT_INSTALLED_NOTICE again."""
    global _noticed
    _noticed = False


def _notice_not_installed() -> None:
    global _noticed
    if not _noticed:
        import sys

        _noticed = True
        print(NOT_INSTALLED_NOTICE, file=sys.stderr, flush=True)


def instruction_text(images: Images, region: dict) -> dict[int, str]:
    """Offset in the region -> nvdisasm's text (or why nvdisasm gave none for that instruction);
    empty when nvdisasm is not installed."""
    return _instruction_text(region_code(images, region), nvdisasm_arch(images.manifest))


def _complaint(stderr: str, returncode: int) -> str:
    """nvdisasm's first complaint in `stderr`, without its `nvdisasm error :` and the address it
    names (the line shows the instruction's own); else its exit status when not 0; else ''."""
    import re

    complaints = [re.sub(r"^nvdisasm (error|warning)\s*:\s*", "", line.strip())
                  for line in stderr.splitlines() if line.strip()]
    complaint = re.sub(r"\s+at address 0x[0-9a-fA-F]+$", "", complaints[0]) if complaints else ""
    if returncode != 0 and not complaint:
        complaint = f"nvdisasm exited with status {returncode}"
    return complaint


# Texts already read in this process by one nvdisasm (_TEXTS_TOOL, nvtools.tool_identity): (arch,
# code) -> offset -> text.  `bobc dump` and `bobc diff` ask for every region of an image set;
# nvdisasm's start-up (about 0.2 s of CPU) is most of what one region costs, so the regions are read
# together (_read_together) and kept here.  Another nvdisasm (BOBC_NVDISASM changed, an upgrade)
# drops them: its texts are its own, as in a fresh process (probe s36 inprocess2 finding 3).  At
# most TEXTS_KEPT codes are kept, the least recently used dropped first (and read again if asked
# for again, giving the same texts): a process that lives on no longer keeps every code it ever
# read (probe s37 leftovers finding 4).
TEXTS_KEPT = 256
_TEXTS: BoundedCache = BoundedCache(TEXTS_KEPT)
_TEXTS_TOOL: str | None = None


def _texts_of(tool: str) -> dict[tuple[str, bytes], dict[int, str]]:
    """_TEXTS, emptied first when they were read by another nvdisasm than `tool`."""
    global _TEXTS_TOOL
    identity = nvtools.tool_identity(tool)
    if identity != _TEXTS_TOOL:
        _TEXTS.clear()
        _TEXTS_TOOL = identity
    return _TEXTS


def _instruction_text(code: bytes, arch: str, running=None) -> dict[int, str]:
    """Offset -> nvdisasm's text for each instruction of `code`; {} when nvdisasm is not installed.

    nvdisasm refuses a whole stream for one instruction it cannot decode: the stream is read
    again with a NOP in place of each instruction its errors name (sass.oracle.read_words, as
    `bobc disasm` reads one: 2 runs for any number of such words, where halving the stream took
    one run per half), so each refused instruction gets "(nvdisasm refuses it: ...)" with
    nvdisasm's reason, and every other instruction its text."""
    tool = nvtools.nvdisasm()
    if tool is None:
        return {}
    whole = len(code) - len(code) % INSTRUCTION_BYTES
    known = _texts_of(tool).get((arch, code[:whole]))
    if known is not None:
        return dict(known)
    out: dict[int, str] = {}
    if whole:
        from ..sass.oracle import read_words

        words = read_words(code[:whole], arch, running=running)
        out.update((d.offset, d.text) for d in words.lines)
        out.update((address, f"(nvdisasm refuses it: {_complaint(refusal.said, refusal.returncode) or 'no text'})")
                   for address, refusal in words.refused.items())
        out = dict(sorted(out.items()))
    _TEXTS[(arch, code[:whole])] = dict(out)
    return out


# The second reading's base address (_read_together): far above any code an image holds.
SHIFTED_BASE = 1 << 32
_HEX = None


def _moved_back(text: str, shifted: str, start: int) -> str | None:
    """`text`, which nvdisasm gave an instruction at `start` + its offset in a region, as it gives
    it with the region at 0: every number that moved by SHIFTED_BASE in `shifted` (the same
    instruction read at SHIFTED_BASE higher) is a code address, and is moved back by `start`.
    None when the two readings differ otherwise, or an address would fall below the region."""
    global _HEX
    import re

    if _HEX is None:
        _HEX = re.compile(r"0x[0-9a-f]+")
    if text == shifted:
        return text
    words, shifted_words = _HEX.split(text), _HEX.split(shifted)
    numbers, shifted_numbers = _HEX.findall(text), _HEX.findall(shifted)
    if words != shifted_words or len(numbers) != len(shifted_numbers):
        return None
    out = [words[0]]
    for number, moved, word in zip(numbers, shifted_numbers, words[1:]):
        if number != moved:
            value = int(number, 16)
            if int(moved, 16) - value != SHIFTED_BASE or value < start or number != hex(value):
                return None
            number = hex(value - start)
        out += [number, word]
    return "".join(out)


def _read_together(codes: list[bytes], arch: str) -> None:
    """Read the texts of several code streams (an image set's regions) into _TEXTS with two
    nvdisasm runs, side by side, in place of one (or more) per stream: the streams one after
    another, read at base 0 and at SHIFTED_BASE.  nvdisasm prints a branch's target as an
    address, so an instruction of a stream that does not start the run reads its targets moved
    by the stream's start: the numbers that differ between the two readings are those addresses
    (_moved_back), and the text is what reading the stream alone at 0 gives.  A word nvdisasm
    refuses is read as oracle.read_words reads it (the joined stream again with a NOP in its
    place), so one such word costs a few runs, not one per stream.  A stream the joined readings
    do not account for (a reading it cannot move back, nvdisasm's warnings) is read alone as
    before (_instruction_text), those side by side.  The nvdisasm runs of its
    worker threads are registered (children.in_threads): an interrupted command stops them, never
    waits for them (probe s35 interrupt finding 2)."""
    tool = nvtools.nvdisasm()
    if tool is None:
        return
    wanted = list(dict.fromkeys(code[:len(code) - len(code) % INSTRUCTION_BYTES] for code in codes))
    wanted = [code for code in wanted if code and (arch, code) not in _texts_of(tool)]
    if len(wanted) > 1:
        from ..children import Running, in_threads
        from ..sass.oracle import read_words

        joined = b"".join(wanted)
        running = Running()
        plain, shifted = in_threads(lambda base: read_words(joined, arch, running=running, base=base),
                                    [0, SHIFTED_BASE], 2, "bobc-nvdisasm", running)
        refused = set(plain.refused)
        if not plain.notes and not shifted.notes and {a - SHIFTED_BASE for a in shifted.refused} == refused \
                and [d.offset for d in plain.lines] == [a for a in range(0, len(joined), INSTRUCTION_BYTES)
                                                        if a not in refused] \
                and [d.offset for d in shifted.lines] == [SHIFTED_BASE + d.offset for d in plain.lines]:
            # a word nvdisasm refuses (read again with a NOP in its place: oracle.read_words) is
            # said as reading its stream alone says it; every other word's text is moved back
            lines = dict(zip((d.offset for d in plain.lines), zip(plain.lines, shifted.lines)))
            start = 0
            for code in wanted:
                texts = {}
                for offset in range(start, start + len(code), INSTRUCTION_BYTES):
                    if offset in refused:
                        refusal = plain.refused[offset]
                        texts[offset - start] = (f"(nvdisasm refuses it: "
                                                 f"{_complaint(refusal.said, refusal.returncode) or 'no text'})")
                        continue
                    text = _moved_back(lines[offset][0].text, lines[offset][1].text, start)
                    if text is None:
                        break
                    texts[offset - start] = text
                else:
                    _TEXTS[(arch, code)] = texts
                start += len(code)
        wanted = [code for code in wanted if (arch, code) not in _TEXTS]
    if len(wanted) > 1:
        import os

        from ..children import Running, in_threads

        running = Running()
        in_threads(lambda code: _instruction_text(code, arch, running), wanted,
                   min(len(wanted), os.cpu_count() or 1), "bobc-nvdisasm", running)


def _image_codes(images: Images) -> list[bytes]:
    """The code streams `lines` reads of an image set: the residence stage's, then each region's."""
    codes = [region_code(images, region) for region in images.manifest["regions"]]
    stage = _stage_code(images)
    return ([stage] if stage is not None else []) + codes


def code_lines(images: Images, region: dict, with_text: bool = True) -> list[Line]:
    """Each instruction of a region: its two words, its control code decoded, nvdisasm's text.
    The first region asked for of an image set has every region of the set read with it
    (_read_together: `bobc diff` asks region by region)."""
    arch = nvdisasm_arch(images.manifest)
    code = region_code(images, region)
    tool = nvtools.nvdisasm() if with_text else None
    if tool is not None and (arch, code[:len(code) - len(code) % INSTRUCTION_BYTES]) not in _texts_of(tool):
        _read_together([region_code(images, r) for r in images.manifest["regions"]], arch)
    return _code_lines(code, f"region[{region['index']}]", region["identity"], arch, with_text,
                       at=region["place"])


def _code_lines(code: bytes, key: str, owner: str, arch: str, with_text: bool, at: int | None = None) -> list[Line]:
    """`at`: the code's byte offset in program.bin (its lines' spans), None for code elsewhere."""
    from ..sass.syntax import Control

    texts = _instruction_text(code, arch) if with_text else {}
    installed = not with_text or bool(texts) or nvtools.nvdisasm() is not None
    missing = ("(not decoded)" if installed else NOT_INSTALLED) if with_text else ""
    if missing == NOT_INSTALLED and len(code) >= INSTRUCTION_BYTES:
        _notice_not_installed()
    out = []
    for offset in range(0, len(code) - len(code) % INSTRUCTION_BYTES, INSTRUCTION_BYTES):
        lo, hi = struct.unpack_from("<QQ", code, offset)
        out.append(Line(f"{key}.code[{offset:#06x}]", [lo, hi],
                        f"{Control.from_word(hi).text()} {texts.get(offset, missing)}".rstrip(), owner, "code",
                        spans=(("program", 8 * (at + offset), 128),) if at is not None else ()))
    return out


STAGE_ARGUMENTS = ("the program table (source)", "the program residence (destination)", "16-byte units")


def stage_lines(images: Images, with_code: bool = True) -> list[Line]:
    """The program residence's stage (bobc.nvidia.residence), read from the pushbuffer's appendix:
    its QMD's nonzero fields, its three parameters and its code; none without a residence."""
    m = images.manifest
    residence = m.get("residence")
    if not residence:
        return []
    stage, base = residence["stage"], m["bases"]["pushbuffer"]
    owner = stage["identity"]
    at = lambda address, size: images.push[address - base:address - base + size]     # noqa: E731
    out = [Line(f"residence.stage.qmd.{name}", value, "", owner, "qmd")
           for name, value in qmd.decode(m["qmd_layout"], at(stage["qmd_address"], m["sizes"]["qmd_record"]))
           if value]
    bank = at(stage["parameter_address"], m["sizes"]["parameter_block"])
    for k, meaning in enumerate(STAGE_ARGUMENTS):
        offset = m["parameter_base"] + 8 * k
        out.append(Line(f"residence.stage.bank0[{offset:#x}]", struct.unpack_from("<Q", bank, offset)[0], meaning,
                        owner, "bank0"))
    if with_code:
        out += _code_lines(_stage_code(images), "residence.stage", owner, nvdisasm_arch(m), True)
    return out


def _stage_code(images: Images) -> bytes | None:
    """The residence stage's code (its appendix's zero padding cut), None without a residence."""
    m = images.manifest
    residence = m.get("residence")
    if not residence:
        return None
    stage, base = residence["stage"], m["bases"]["pushbuffer"]
    code = images.push[stage["program_address"] - base:stage["push_offset"] + stage["bytes"]]
    while code[-INSTRUCTION_BYTES:] == bytes(INSTRUCTION_BYTES):      # the appendix's zero padding
        code = code[:-INSTRUCTION_BYTES]
    return code


def lines(images: Images, nonzero_only: bool = False, with_code: bool = True) -> list[Line]:
    """Everything an image set says, one self-describing line per fact, in a fixed order."""
    if with_code:
        _read_together(_image_codes(images), nvdisasm_arch(images.manifest))   # nvdisasm twice, not per stream
    out = header_lines(images) + region_lines(images) + launch_lines(images, nonzero_only)
    out += submission_lines(images)
    out += push_lines(images) + ring_lines(images) + stage_lines(images, with_code)
    if with_code:
        for region in images.manifest["regions"]:
            out += code_lines(images, region)
    return out


def render(images: Images, nonzero_only: bool = False, with_code: bool = True) -> str:
    return "".join(line.text() + "\n" for line in lines(images, nonzero_only, with_code))


def _flat(value, prefix: str = "") -> dict[str, object]:
    """A JSON value as dotted path -> leaf (objects are walked, lists are leaves)."""
    if isinstance(value, dict):
        out: dict[str, object] = {}
        for key, item in value.items():
            out.update(_flat(item, f"{prefix}.{key}" if prefix else str(key)))
        return out
    return {prefix: value}


def _dwords_bytes(dwords) -> bytes:
    return b"".join(int(d).to_bytes(4, "little") for d in dwords)
