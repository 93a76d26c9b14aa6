"""Edges of the QMD codec (compiler/bobc/nvidia/qmd.py) and its position table's look-up
(compiler/bobc/qmd_headers.py) that session 39's mutation testing (notes/s39/probe-mutants.md)
found no test held.  A V04_00 QMD is 384 bytes and a V03_00 one 256 (clcbc0qmd.h / clc7c0qmd.h:
the highest MW bit of each, rounded to its size); a reserved range is no field."""
from __future__ import annotations

import pytest

from bobc import qmd_headers
from bobc.errors import BobcError
from bobc.nvidia import qmd


@pytest.mark.parametrize("layout, size", [("V03_00", 256), ("V04_00", 384)])
def test_a_qmd_one_byte_short_is_refused(layout, size):
    with pytest.raises(BobcError, match=f"needs {size} bytes, got {size - 1}"):
        qmd.QMD(layout, bytes(size - 1))
    assert qmd.QMD(layout, bytes(size)).to_bytes() == bytes(size)


@pytest.mark.parametrize("layout, size", [("V03_00", 256), ("V04_00", 384)])
def test_a_qmd_does_not_fit_a_smaller_slot(layout, size):
    with pytest.raises(BobcError, match="does not fit"):
        qmd.QMD(layout).to_bytes(record_bytes=size - 4)
    assert len(qmd.QMD(layout).to_bytes(record_bytes=size + 128)) == size + 128


def test_a_reserved_range_is_a_position_only_when_asked_for():
    name, bits = next(iter(qmd_headers.RESERVED["V03_00"].items()))
    assert qmd_headers.position("V03_00", name) == bits
    with pytest.raises(KeyError):
        qmd_headers.position("V03_00", name, reserved=False)
    with pytest.raises(BobcError, match="no field named"):
        qmd.QMD("V03_00").set(name, 0)


def test_a_slot_named_by_no_number_is_no_field():
    # CONSTANT_BUFFER_ADDR_LOWER(i) is indexed; "(x)" names no slot: a KeyError, as any unknown name
    assert qmd_headers.position("V03_00", "CONSTANT_BUFFER_ADDR_LOWER(1)") == (1055 + 64, 1024 + 64)
    with pytest.raises(KeyError):
        qmd_headers.position("V03_00", "CONSTANT_BUFFER_ADDR_LOWER(x)")
