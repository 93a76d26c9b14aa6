"""The simulator's QMD positions: transcribed from open-gpu-doc, cross-checked.

bobc.sim.qmd_fields and bobc.nvidia.qmd were written separately from the
same NVIDIA headers; every field both name must sit at the same bits (a
transcription slip in either shows up here), and a few positions are
restated by hand from clc7c0qmd.h / clcbc0qmd.h.
"""
from __future__ import annotations

import pytest

from bobc.nvidia import qmd as encoder_qmd
from bobc.sim import qmd_fields


@pytest.mark.parametrize("layout", ["V03_00", "V04_00"])
def test_both_transcriptions_agree_on_every_field_they_share(layout):
    ours = qmd_fields.all_fields(layout)
    theirs = {name: tuple(bits) for name, bits in dict(encoder_qmd.layout_named(layout).fields).items()}
    shared = set(ours) & set(theirs)
    assert len(shared) > 30, f"only {len(shared)} shared fields"
    differing = {name: (ours[name], theirs[name]) for name in shared if ours[name] != theirs[name]}
    assert not differing


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
