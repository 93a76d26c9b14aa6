"""Comparing two image sets fact by fact, for golden tests and `bobc diff` that say what changed.

A byte diff of qmd.bin says "byte 0x8a2 differs"; this says
`launch[3].qmd.CTA_THREAD_DIMENSION0 (KERNEL): 0x40 -> 0x80`.  Both
sides are decoded into decode.Line facts (the same lines `bobc dump` prints)
and matched by their self-describing keys, so each difference names the
launch and its kernel, the QMD field, the pushbuffer method and its data word,
the ring entry, the bank 0 word and its argument, or the instruction with its
text and control code.  An empty list means the two hold the same images.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from . import decode
from .encode import Images


CONTROL_MASK = (1 << 41) - 1   # the high word's bits below the control code (bits 105.. of the instruction)


@dataclass(frozen=True)
class Difference:
    key: str               # the fact's self-describing path (as `bobc dump` prints it)
    kind: str              # header, region, launch, qmd, bank0, push, gpfifo, code
    owner: str             # the kernel or submission the fact belongs to ("" for the manifest's own)
    a: object              # the value in a (None: absent)
    b: object
    meaning: str           # what changed, in words: the argument, method, control code, instruction

    def text(self) -> str:
        head = f"{self.key} ({self.owner})" if self.owner else self.key
        a, b = decode.format_value(self.a, self.kind), decode.format_value(self.b, self.kind)
        change = f"only in b: {b}" if self.a is None else f"only in a: {a}" if self.b is None else f"{a} -> {b}"
        return f"{head}: {change}" + (f"  [{self.meaning}]" if self.meaning else "")

    def as_json(self) -> dict:
        return {"key": self.key, "kind": self.kind, "owner": self.owner, "a": self.a, "b": self.b,
                "meaning": self.meaning}


def _control_change(hi_a: int, hi_b: int) -> str:
    from ..sass.syntax import Control

    ca, cb = Control.from_word(hi_a), Control.from_word(hi_b)
    if ca == cb:
        return ""
    names = {"stall": "stall", "yield_bit": "yield", "write_barrier": "write barrier",
             "read_barrier": "read barrier", "wait_mask": "wait mask", "reuse": "reuse"}
    changed = [f"{label} {getattr(ca, f)} -> {getattr(cb, f)}" for f, label in names.items()
               if getattr(ca, f) != getattr(cb, f)]
    return f"control code {ca.text()} -> {cb.text()} ({', '.join(changed)})"


def _code_meaning(la: decode.Line | None, lb: decode.Line | None) -> str:
    if la is None or lb is None:
        return (la or lb).note
    (lo_a, hi_a), (lo_b, hi_b) = la.value, lb.value
    text_a, text_b = (line.note.partition(" ")[2] for line in (la, lb))
    parts = []
    control = _control_change(hi_a, hi_b)
    if control:
        parts.append(control)
    if text_a != text_b:
        parts.append(f"instruction {text_a} -> {text_b}")
    elif (lo_a, hi_a & CONTROL_MASK) != (lo_b, hi_b & CONTROL_MASK) or not control:
        parts.append(f"instruction {text_a} (its text unchanged)")
    else:
        parts.append(f"instruction {text_a}")
    return "; ".join(parts)


def _meaning(la: decode.Line | None, lb: decode.Line | None) -> str:
    line = la or lb
    if line.kind == "code":
        return _code_meaning(la, lb)
    if line.kind == "push":
        names = [x.key.rsplit(".", 1)[1] for x in (la, lb) if x is not None]
        method = names[0] if len(set(names)) == 1 else " -> ".join(names)
        meanings = list(dict.fromkeys(x.note for x in (la, lb) if x is not None and x.note))
        return f"method {method} ({line.where})" + (f": {' -> '.join(meanings)}" if meanings else "")
    if la is not None and lb is not None and la.note != lb.note and la.note and lb.note:
        return f"{la.note} -> {lb.note}"
    return (lb.note if lb is not None else "") or (la.note if la is not None else "")


def _differences(lines_a: list[decode.Line], lines_b: list[decode.Line]) -> list[Difference]:
    by_a = {line.match: line for line in lines_a}
    by_b = {line.match: line for line in lines_b}
    order = list(by_a) + [key for key in by_b if key not in by_a]
    out = []
    for match in order:
        la, lb = by_a.get(match), by_b.get(match)
        if la is not None and lb is not None and la.value == lb.value and la.key == lb.key:
            continue
        line = la or lb
        out.append(Difference(line.key if la is None or lb is None or la.key == lb.key else match,
                              line.kind, line.owner, la.value if la else None, lb.value if lb else None,
                              _meaning(la, lb)))
    return out


def _region_code_lines(images: Images, region: dict, other: Images, other_region: dict | None,
                       ) -> list[decode.Line]:
    """A region's instruction lines, with nvdisasm's text only where the two sides differ."""
    if other_region is not None and decode.region_code(images, region) == decode.region_code(other, other_region):
        return decode.code_lines(images, region, with_text=False)  # identical: no text is ever shown
    return decode.code_lines(images, region)


def differences(a: Images, b: Images) -> list[Difference]:
    """Every fact that differs between two image sets (a -> b), in dump order."""
    lines_a = decode.header_lines(a) + decode.region_lines(a)
    lines_b = decode.header_lines(b) + decode.region_lines(b)
    if a.manifest["qmd_layout"] == b.manifest["qmd_layout"]:
        lines_a += decode.launch_lines(a, zero_words=True)
        lines_b += decode.launch_lines(b, zero_words=True)
    else:  # a different QMD layout: compare the launches, not field by field
        lines_a += [line for line in decode.launch_lines(a, zero_words=True) if line.kind != "qmd"]
        lines_b += [line for line in decode.launch_lines(b, zero_words=True) if line.kind != "qmd"]
    lines_a += decode.submission_lines(a) + decode.push_lines(a) + decode.ring_lines(a)
    lines_b += decode.submission_lines(b) + decode.push_lines(b) + decode.ring_lines(b)
    regions_a = {r["index"]: r for r in a.manifest["regions"]}
    regions_b = {r["index"]: r for r in b.manifest["regions"]}
    for index in sorted(set(regions_a) | set(regions_b)):
        ra, rb = regions_a.get(index), regions_b.get(index)
        if ra is not None:
            lines_a += _region_code_lines(a, ra, b, rb)
        if rb is not None:
            lines_b += _region_code_lines(b, rb, a, ra)
    return _differences(lines_a, lines_b)


def compare(folder_a: str | Path, folder_b: str | Path) -> list[str]:
    """Fact-level differences between two image folders or hosts (a -> b), one line each."""
    return [d.text() for d in differences(decode.load_images(folder_a), decode.load_images(folder_b))]
