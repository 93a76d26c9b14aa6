"""QMD (queue meta data) layouts as tables of named bit fields, and a codec.

A QMD is a little-endian array of 32-bit words; every field is a bit range
(high, low) counted from bit 0 of word 0, the way NVIDIA's headers write
MW(high:low).  One table per layout version; the Target's `qmd_layout` picks
one, so nothing here knows which GPU it is for.

The positions are bobc.qmd_headers' (open-gpu-doc clc7c0qmd.h V03_00 and
clcbc0qmd.h V04_00, declared there once, with their source; the simulator
reads the same table): a layout's fields are every field of its header, each
slot of an indexed field named NAME(i), less the ranges the header reserves.
"""
from __future__ import annotations

from dataclasses import dataclass

from .. import qmd_headers
from ..errors import BobcError

Field = qmd_headers.Field        # (high bit, low bit), inclusive


@dataclass(frozen=True)
class QMDLayout:
    """One QMD version: its size and its fields, in its header's order."""

    name: str
    size: int                      # bytes the hardware reads
    fields: dict[str, Field]
    source: str

    def field(self, name: str) -> Field:
        try:
            return self.fields[name]
        except KeyError:
            raise BobcError(f"QMD {self.name} has no field named {name}") from None


LAYOUTS: dict[str, QMDLayout] = {
    name: QMDLayout(name, size, qmd_headers.fields(name), qmd_headers.SOURCES[name])
    for name, size in (("V03_00", 256), ("V04_00", 384))
}


def layout_named(name: str) -> QMDLayout:
    try:
        return LAYOUTS[name]
    except KeyError:
        raise BobcError(f"unknown QMD layout {name!r}", hint=f"known: {', '.join(sorted(LAYOUTS))}") from None


class QMD:
    """A QMD being written: `QMD("V04_00").set("GRID_WIDTH", 1).to_bytes()`.

    Values are checked against the field's width; a value that does not fit
    is an error naming the field (and `context`, e.g. the launch) rather than
    a silently truncated launch.
    """

    def __init__(self, layout: str | QMDLayout, raw: bytes | None = None, context: str = ""):
        self.layout = layout if isinstance(layout, QMDLayout) else layout_named(layout)
        self.context = context
        if raw is None:
            self.bits = 0
        else:
            if len(raw) < self.layout.size:
                raise BobcError(f"QMD {self.layout.name} needs {self.layout.size} bytes, got {len(raw)}")
            self.bits = int.from_bytes(raw[: self.layout.size], "little")

    def set(self, name: str, value: int) -> "QMD":
        high, low = self.layout.field(name)
        width = high - low + 1
        value = int(value)
        if value < 0 or value >> width:
            where = f"{self.context}: " if self.context else ""
            raise BobcError(f"{where}QMD field {name} is {width} bits wide; {value:#x} does not fit")
        mask = ((1 << width) - 1) << low
        self.bits = (self.bits & ~mask) | (value << low)
        return self

    def get(self, name: str) -> int:
        high, low = self.layout.field(name)
        return (self.bits >> low) & ((1 << (high - low + 1)) - 1)

    def to_bytes(self, record_bytes: int | None = None) -> bytes:
        """The QMD, zero-padded to `record_bytes` (its table slot) when given."""
        raw = self.bits.to_bytes(self.layout.size, "little")
        if record_bytes is not None:
            if record_bytes < len(raw):
                raise BobcError(f"a {self.layout.name} QMD ({len(raw)} bytes) does not fit a {record_bytes}-byte slot")
            raw += bytes(record_bytes - len(raw))
        return raw


def decode(layout: str | QMDLayout, raw: bytes) -> list[tuple[str, int]]:
    """Every field of the layout, by name and value, in bit order."""
    qmd = QMD(layout, raw)
    ordered = sorted(qmd.layout.fields.items(), key=lambda item: item[1][1])
    return [(name, qmd.get(name)) for name, _ in ordered]


def decode_dict(layout: str | QMDLayout, raw: bytes) -> dict[str, int]:
    return dict(decode(layout, raw))
