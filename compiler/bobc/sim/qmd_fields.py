"""The simulator's reading of QMD fields: positions from the published table, code of its own.

The simulator reads each launch's QMD through the field positions of NVIDIA's class headers
(bobc.qmd_headers: every MW(high:low) of open-gpu-doc clc7c0qmd.h V03_00 and clcbc0qmd.h
V04_00, transcribed there once as data, and held to the headers by tests/sim/test_qmd_fields.py).
The encoder (bobc.nvidia.qmd) writes through the same published table, but the simulator shares
none of the encoder's code: which fields it reads for a launch, and what it makes of their
values, are its own (qmd_reader.py), so an encoder that writes the wrong field, value or layout
launches the wrong grid here too.  A slip in the table itself is what the header check is for.
"""
from __future__ import annotations

from .. import qmd_headers

LAYOUTS = qmd_headers.FIELDS
# QMD_MAJOR_VERSION -> layout; both layouts keep the major version at MW(583:580).
MAJOR_VERSIONS = {3: "V03_00", 4: "V04_00"}


def position(layout: str, name: str) -> tuple[int, int]:
    """(high, low) of `name` (NAME, a reserved range's, or NAME(i) for a slot the layout has) in
    `layout`; KeyError for an unknown field or slot."""
    return qmd_headers.position(layout, name)


def read(raw: bytes, layout: str, name: str) -> int:
    high, low = position(layout, name)
    value = int.from_bytes(raw, "little")
    return (value >> low) & ((1 << (high - low + 1)) - 1)


def all_fields(layout: str) -> dict[str, tuple[int, int]]:
    """Every field of `layout`, each slot of an indexed one, and the reserved ranges."""
    return qmd_headers.fields(layout, reserved=True)
