"""Reading an image folder back: QMD fields, methods, ring entries, parameter words, code.

The manifest says where each launch's QMD and parameter block and each
submission's segment lie; everything else is decoded from the bytes with the
same tables the encoder used (qmd.py, pushbuffer.py, gpfifo.py), so a dump
shows what the hardware will read, not what the encoder meant.
"""
from __future__ import annotations

import json
import struct
import subprocess
import tempfile
from pathlib import Path

from ..errors import BobcError, UsageError
from .. import nvtools
from . import gpfifo, pushbuffer, qmd
from .encode import IMAGE_FILES, Images


# The manifest entries `render` and the readers below rely on.
MANIFEST_KEYS = ("target", "qmd_layout", "compute_class", "parameter_base", "bases", "sizes",
                 "regions", "launches", "submissions", "prologue")


def read_images(folder: str | Path) -> Images:
    folder = Path(folder)
    if not folder.is_dir():
        raise UsageError(f"no such folder: {folder}")
    try:
        manifest = json.loads((folder / "manifest.json").read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise UsageError(f"{folder} has no manifest.json; is it a `bobc build --emit-images` folder?") from None
    except json.JSONDecodeError as error:
        raise BobcError(f"{folder / 'manifest.json'} is not JSON: {error}") from None
    missing = [key for key in MANIFEST_KEYS if key not in manifest] if isinstance(manifest, dict) else None
    if missing is None or missing:
        lacks = f"it lacks {', '.join(missing)}" if missing else "it is not a JSON object"
        raise BobcError(f"{folder / 'manifest.json'} is not a bobc image manifest: {lacks}",
                        hint="write the folder again with `bobc build --emit-images`")
    data = {}
    for attribute, name in IMAGE_FILES.items():
        path = folder / name
        if not path.is_file():
            raise UsageError(f"{folder} has no {name}")
        data[attribute] = path.read_bytes()
    images = Images(manifest=manifest, **data)
    sizes = manifest.get("sizes", {})
    for attribute, key in (("program", "program"), ("qmd", "qmd"), ("push", "pushbuffer"), ("gpfifo", "gpfifo")):
        if key in sizes and sizes[key] != len(data[attribute]):
            raise BobcError(f"{folder / IMAGE_FILES[attribute]} is {len(data[attribute])} bytes; "
                            f"the manifest says {sizes[key]}")
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
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "code.bin"
        path.write_bytes(code)
        done = subprocess.run([tool, "-b", arch, "--base-address", hex(base), str(path)],
                              capture_output=True, text=True)
    if done.returncode != 0 or done.stderr.strip():
        return f"nvdisasm failed ({done.returncode}): {done.stderr.strip()}\n{done.stdout}"
    return done.stdout


def render(images: Images, nonzero_only: bool = False, with_code: bool = True) -> str:
    m = images.manifest
    out: list[str] = []
    bases = m["bases"]
    out.append(f"target {m['target']} (QMD {m['qmd_layout']}, compute class {m['compute_class']:#06x}, "
               f"parameters at bank 0 {m['parameter_base']:#x})")
    out.append("bases: " + ", ".join(f"{k} {v:#x}" for k, v in sorted(bases.items())))
    out.append("sizes: " + ", ".join(f"{k} {v}" for k, v in sorted(m["sizes"].items())))
    out.append("")
    out.append("== regions")
    for r in m["regions"]:
        out.append(f"region {r['index']} {r['identity']}: {r['size']} bytes at {r['address']:#x} "
                   f"(place {r['place']:#x}, plan place {r['plan_place']:#x}), registers {r['registers']} "
                   f"(QMD {r['qmd_registers']}), block x {r['block_x']}, shared {r['shared_bytes']}")
    if m.get("pruned_regions"):
        out.append("pruned: " + ", ".join(m["pruned_regions"]))
    out.append("")
    out.append("== launches")
    for launch in m["launches"]:
        i = launch["index"]
        out.append(f"launch {i} {launch['identity']}: region {launch['region']}, program "
                   f"{launch['program_address']:#x}, grid {tuple(launch['grid'])}, block {tuple(launch['block'])}, "
                   f"QMD {launch['qmd_address']:#x}, parameters {launch['parameter_address']:#x}")
        for name, value in qmd_fields(images, i):
            if value or not nonzero_only:
                out.append(f"  qmd {name} = {value:#x}")
        for offset, value in parameter_words(images, i):
            out.append(f"  c[0x0][{offset:#x}] = {value:#018x}")
    out.append("")
    out.append("== pushbuffer")
    for label, methods in push_segments(images):
        out.append(label)
        for method in methods:
            out.append(f"  +{method.offset:#06x} {method.describe()}")
    out.append("")
    out.append("== GPFIFO")
    out.append(f"prologue entry: {gpfifo.decode_entry(_dwords_bytes(m['prologue']['gpfifo_entry'])).describe()}")
    for index, entry in enumerate(ring_entries(images)):
        out.append(f"entry {index}: {entry.describe()}")
    if with_code:
        out.append("")
        out.append("== code")
        for r in m["regions"]:
            out.append(f"region {r['index']} {r['identity']} at {r['address']:#x}")
            text = disassemble(region_code(images, r), m["nvdisasm_arch"], r["address"])
            out.append(text.rstrip() if text is not None else "  (nvdisasm not installed)")
    return "\n".join(out) + "\n"


def _dwords_bytes(dwords) -> bytes:
    return b"".join(int(d).to_bytes(4, "little") for d in dwords)
