"""QMD field positions checked bit by bit against the facts doc's numbers.

Each expectation below is derived by hand from shared/docs/nvidia-driver-facts.md
section 3 (bit h:l -> dword l // 32, shift l % 32), not from qmd.py's tables.
"""
import pytest

from bobc.errors import BobcError
from bobc.nvidia import qmd


def dword(raw: bytes, index: int) -> int:
    return int.from_bytes(raw[4 * index:4 * index + 4], "little")


def test_v03_thread_dimension0_is_bits_607_592():
    raw = qmd.QMD("V03_00").set("CTA_THREAD_DIMENSION0", 0x40).to_bytes()
    assert len(raw) == 256
    assert raw[74] == 0x40 and raw[75] == 0           # bit 592 = byte 74
    assert sum(raw) == 0x40


def test_v03_register_count_is_bits_656_648():
    raw = qmd.QMD("V03_00").set("REGISTER_COUNT_V", 0x1FF).to_bytes()
    assert dword(raw, 20) == 0x1FF << 8                # 648 = 20*32 + 8


def test_v03_major_version_and_sass_version():
    raw = qmd.QMD("V03_00").set("QMD_MAJOR_VERSION", 3).set("SASS_VERSION", 0x86).to_bytes()
    assert dword(raw, 18) == 3 << 4                    # 583:580 -> dword 18 bits 7:4
    assert dword(raw, 51) == 0x86 << 24                # 1663:1656 -> dword 51 bits 31:24


def test_v03_constant_buffer_slots():
    q = qmd.QMD("V03_00")
    q.set("CONSTANT_BUFFER_SIZE_SHIFTED4(0)", 32).set("CONSTANT_BUFFER_ADDR_LOWER(1)", 0x12345678)
    q.set("CONSTANT_BUFFER_VALID(0)", 1).set("CONSTANT_BUFFER_INVALIDATE(0)", 1)
    raw = q.to_bytes()
    assert dword(raw, 33) == (32 << 19) | (1 << 18)    # 1087:1075 and 1074 in dword 33
    assert dword(raw, 34) == 0x12345678                # 1119:1088 = slot 1's lower address
    assert dword(raw, 20) == 1                         # 640 = dword 20 bit 0


def test_v04_grid_registers_type_and_program_address():
    q = qmd.QMD("V04_00")
    q.set("GRID_WIDTH", 256).set("REGISTER_COUNT", 32).set("QMD_TYPE", 2)
    q.set("PROGRAM_ADDRESS_UPPER", 0x1FFFFFF).set("BARRIER_COUNT", 1)
    raw = q.to_bytes()
    assert len(raw) == 384
    assert dword(raw, 32) == 256                       # 1055:1024
    assert dword(raw, 37) == (32 << 16) | (1 << 27)    # 1208:1200 and 1215:1211
    assert dword(raw, 0) == 2 << 23                    # 25:23
    assert dword(raw, 39) == 0x1FFFFFF                 # 1272:1248


def test_v04_constant_buffer_zero():
    q = qmd.QMD("V04_00").set("CONSTANT_BUFFER_VALID(0)", 1).set("CONSTANT_BUFFER_INVALIDATE(0)", 1)
    q.set("CONSTANT_BUFFER_ADDR_LOWER_SHIFTED6(0)", 0xABCDEF).set("CONSTANT_BUFFER_SIZE_SHIFTED4(0)", 64)
    raw = q.to_bytes()
    assert dword(raw, 13) == 0b1001                    # 416 valid, 419 invalidate
    assert dword(raw, 48) == 0xABCDEF                  # 1567:1536
    assert dword(raw, 49) == 64 << 19                  # 1599:1587


def test_a_value_too_wide_is_refused_naming_the_field():
    with pytest.raises(BobcError, match="REGISTER_COUNT_V"):
        qmd.QMD("V03_00", context="launch 3").set("REGISTER_COUNT_V", 512)


@pytest.mark.parametrize("name", sorted(qmd.LAYOUTS))
def test_tables_have_no_overlapping_fields_and_fit_the_record(name):
    layout = qmd.LAYOUTS[name]
    seen = {}
    for field, (high, low) in layout.fields.items():
        assert high >= low and high < 8 * layout.size, field
        for bit in range(low, high + 1):
            assert bit not in seen, f"{field} overlaps {seen.get(bit)}"
            seen[bit] = field


@pytest.mark.parametrize("name", sorted(qmd.LAYOUTS))
def test_decode_lists_every_field_and_reads_back_what_was_set(name):
    layout = qmd.LAYOUTS[name]
    q = qmd.QMD(name)
    for i, field in enumerate(sorted(layout.fields)):
        high, low = layout.fields[field]
        q.set(field, (i * 2654435761) % (1 << (high - low + 1)))
    decoded = qmd.decode(name, q.to_bytes())
    assert [f for f, _ in decoded] == sorted(layout.fields, key=lambda f: layout.fields[f][1])
    for i, field in enumerate(sorted(layout.fields)):
        high, low = layout.fields[field]
        assert dict(decoded)[field] == (i * 2654435761) % (1 << (high - low + 1))
