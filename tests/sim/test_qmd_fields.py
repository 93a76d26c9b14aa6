"""The QMD field positions, declared once (bobc.qmd_headers), held to NVIDIA's headers.

The encoder (bobc.nvidia.qmd) and the simulator (bobc.sim.qmd_fields) both read that one table;
before probe s38 onetable each had its own transcription, and a test compared the names both
had.  The table is now held to the headers themselves: rendered back as the headers' defines
(`NAME MW(high:low)`, `NAME(i) MW((high+(i)*stride):(low+(i)*stride))`, reserved ranges too),
sorted, its lines hash to the sha256 of the same lines taken from open-gpu-doc c8607fe
classes/compute/clc7c0qmd.h (NVC7C0_QMDV03_00_*) and clcbc0qmd.h (NVCBC0_QMDV04_00_*): every
`#define PREFIX NAME MW(...)` line, the prefix and the `#define` taken off, white space folded to
one space (144 and 134 lines; the digests were computed from the headers, not from this table).
A few positions are restated by hand from the headers as well.
"""
from __future__ import annotations

import hashlib

import pytest

from bobc import qmd_headers
from bobc.nvidia import qmd as encoder_qmd
from bobc.sim import qmd_fields

HEADER_LINES = {   # layout: (its MW defines, sha256 of them sorted and joined by "\n")
    "V03_00": (144, "5e6410f9973c5a2a9adc2be1ce033ec12aba44182df8fbf0d117359ca2654a78"),
    "V04_00": (134, "a818c9c3fef283034c1be02830d004e6f46ccf484e9743e4d532bf310d75a35a"),
}


def rendered(layout: str) -> list[str]:
    """The table's entries as the header writes its defines."""
    out = []
    for name, bits in qmd_headers.FIELDS[layout].items():
        if len(bits) == 2:
            out.append(f"{name} MW({bits[0]}:{bits[1]})")
        else:
            high, low, stride, _slots = bits
            out.append(f"{name} MW(({high}+(i)*{stride}):({low}+(i)*{stride}))")
    out += [f"{name} MW({high}:{low})" for name, (high, low) in qmd_headers.RESERVED[layout].items()]
    return out


@pytest.mark.parametrize("layout", sorted(HEADER_LINES))
def test_the_table_is_every_define_of_the_header(layout):
    lines = rendered(layout)
    count, digest = HEADER_LINES[layout]
    assert len(lines) == len(set(lines)) == count
    assert hashlib.sha256("\n".join(sorted(lines)).encode()).hexdigest() == digest


@pytest.mark.parametrize("layout", sorted(HEADER_LINES))
def test_the_encoder_and_the_simulator_read_the_one_table(layout):
    assert encoder_qmd.layout_named(layout).fields == qmd_headers.fields(layout)
    assert qmd_fields.all_fields(layout) == qmd_headers.fields(layout, reserved=True)
    assert not set(qmd_headers.RESERVED[layout]) & set(encoder_qmd.layout_named(layout).fields)


@pytest.mark.parametrize("layout, name, slots", [
    ("V04_00", "RELEASE_ENABLE", 3),              # RELEASE_SEMAPHORE0..2
    ("V04_00", "DEPENDENT_QMD_ENABLE", 2),        # DEPENDENT_QMD0_POINTER, DEPENDENT_QMD1_POINTER
    ("V04_00", "TPC_DISABLE_MASK", 18),           # 2432..3007, OUTER_PUT at 3008
    ("V03_00", "CONSTANT_BUFFER_VALID", 8),
])
def test_an_indexed_field_has_the_layouts_slots_and_no_more(layout, name, slots):
    """Slot 3 of V04_00's RELEASE_ENABLE would lie on DEPENDENT_QMD_ENABLE(0)'s bit 368: the
    simulator read it there before (every indexed field had 8 slots)."""
    fields = qmd_fields.all_fields(layout)
    assert f"{name}({slots - 1})" in fields and f"{name}({slots})" not in fields
    qmd_fields.position(layout, f"{name}({slots - 1})")
    with pytest.raises(KeyError):
        qmd_fields.position(layout, f"{name}({slots})")


@pytest.mark.parametrize("layout", sorted(HEADER_LINES))
def test_no_two_fields_share_a_bit(layout):
    seen: dict[int, str] = {}
    for name, (high, low) in qmd_fields.all_fields(layout).items():
        for bit in range(low, high + 1):
            assert bit not in seen, f"{name} overlaps {seen[bit]}"
            seen[bit] = name


@pytest.mark.parametrize("layout, name, bits", [
    ("V03_00", "CTA_RASTER_WIDTH", (415, 384)),                 # NVC7C0_QMDV03_00_CTA_RASTER_WIDTH MW(415:384)
    ("V03_00", "CONSTANT_BUFFER_ADDR_LOWER(0)", (1055, 1024)),  # MW((1055+(i)*64):(1024+(i)*64))
    ("V03_00", "CONSTANT_BUFFER_SIZE_SHIFTED4(1)", (1151, 1139)),
    ("V03_00", "REGISTER_COUNT_V", (656, 648)),
    ("V03_00", "PROGRAM_ADDRESS_LOWER", (1567, 1536)),
    ("V04_00", "GRID_WIDTH", (1055, 1024)),                     # NVCBC0_QMDV04_00_GRID_WIDTH MW(1055:1024)
    ("V04_00", "CONSTANT_BUFFER_ADDR_LOWER_SHIFTED6(0)", (1567, 1536)),
    ("V04_00", "REGISTER_COUNT", (1208, 1200)),
    ("V04_00", "QMD_MAJOR_VERSION", (583, 580)),
])
def test_positions_restated_from_the_headers(layout, name, bits):
    assert qmd_fields.position(layout, name) == bits
