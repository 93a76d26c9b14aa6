"""bobc.native.launches.table / decode on hand-made inputs (probe s41 mutants6): the section's bytes
are the layout its docstring and runtime_c/launch_rows.h declare, written out here with struct by
hand; a damaged section is refused naming where, and the images' manifest is cross-checked against
the plan.  The end-to-end tests (test_native_fault_launches_s41.py) build a host (45 s each) and
reach none of the refusals; mutants of table()'s GPFIFO bound and decode's checks passed them."""
from __future__ import annotations

import struct

import pytest

from bobc.errors import BobcError
from bobc.native.launches import decode, table

GPFIFO = struct.pack("<3Q", 0x1111, 0x2222, 0x1122334455667788)          # 24 bytes: entries 0, 1, 2
PLAN = [("k0", [1, 2, 3], "M/P.bob:4:5"), ("k1", [4, 1, 1], None)]


def _manifest(ring_entry=2, launches=None):
    return {"launches": launches if launches is not None else
            [{"index": 1, "identity": "k1", "grid": [4, 1, 1]}, {"index": 0, "identity": "k0", "grid": [1, 2, 3]}],
            "submissions": [{"index": 0, "ring_entry": ring_entry, "launches": [0, 1]}]}


# "BOBCLNC1" | 2 launches | 1 submission; per launch grid x y z, kernel length, kernel, place length, place;
# the submission: GPFIFO entry 2's u64, 2 launches, 0 and 1
EXPECTED = (b"BOBCLNC1" + struct.pack("<II", 2, 1)
            + struct.pack("<IIII", 1, 2, 3, 2) + b"k0" + struct.pack("<I", 11) + b"M/P.bob:4:5"
            + struct.pack("<IIII", 4, 1, 1, 2) + b"k1" + struct.pack("<I", 0)
            + struct.pack("<QI", 0x1122334455667788, 2) + struct.pack("<II", 0, 1))


def test_the_section_is_the_declared_layout_and_reads_back():
    section = table(_manifest(), GPFIFO, PLAN)
    assert section == EXPECTED
    assert decode(section, "h") == ([{"kernel": "k0", "grid": [1, 2, 3], "place": "M/P.bob:4:5"},
                                     {"kernel": "k1", "grid": [4, 1, 1], "place": None}],
                                    [{"entry": 0x1122334455667788, "launches": [0, 1]}])


def test_a_gpfifo_entry_past_the_image_is_refused():
    # 24 bytes hold entries 0..2 (the last at bytes 16..23); entry 3 would start at byte 24
    assert table(_manifest(ring_entry=0), GPFIFO, PLAN).count(struct.pack("<Q", 0x1111)) == 1
    with pytest.raises(BobcError, match=r"submission 0 names GPFIFO entry 3, past the 24-byte GPFIFO image"):
        table(_manifest(ring_entry=3), GPFIFO, PLAN)
    with pytest.raises(BobcError, match=r"GPFIFO entry -1"):
        table(_manifest(ring_entry=-1), GPFIFO, PLAN)


def test_the_manifest_is_held_to_the_plan():
    with pytest.raises(BobcError, match=r"the images' manifest lists launches \[0\], the plan has 2"):
        table(_manifest(launches=[{"index": 0, "identity": "k0", "grid": [1, 2, 3]}]), GPFIFO, PLAN)
    with pytest.raises(BobcError, match=r"the images' launch 1 runs k1 on grid \[4, 1, 2\], the plan's k1 on \[4, 1, 1\]"):
        table(_manifest(launches=[{"index": 0, "identity": "k0", "grid": [1, 2, 3]},
                                  {"index": 1, "identity": "k1", "grid": [4, 1, 2]}]), GPFIFO, PLAN)
    with pytest.raises(BobcError, match=r"the images' launch 0 runs kx"):
        table(_manifest(launches=[{"index": 0, "identity": "kx", "grid": [1, 2, 3]},
                                  {"index": 1, "identity": "k1", "grid": [4, 1, 1]}]), GPFIFO, PLAN)


@pytest.mark.parametrize("section, says", [
    (b"BOBCLNC2" + EXPECTED[8:], "does not start BOBCLNC1"),
    (EXPECTED[:30], "ends at byte 30, inside a field at byte 16"),                # launch 0's four u32 at 16..31
    (EXPECTED[:33], "ends at byte 33, inside a 2-byte name at byte 32"),           # its kernel at 32..33
    (EXPECTED[:-1], f"ends at byte {len(EXPECTED) - 1}, inside a field at byte {len(EXPECTED) - 8}"),
    (EXPECTED + b"\0", "holds 1 bytes after its last submission"),
])
def test_a_damaged_section_is_refused_naming_the_host(section, says):
    with pytest.raises(BobcError) as refused:
        decode(section, "./h")
    assert str(refused.value).startswith("./h: damaged host file: its .bobc.launches section " + says), str(refused.value)


def test_the_exact_section_has_no_byte_too_many_or_too_few():
    # the last launch index ends at the last byte: decode reads exactly len(EXPECTED)
    assert decode(EXPECTED, "h")[1][0]["launches"] == [0, 1]


def test_a_section_ending_with_a_name_reads_to_its_last_byte():
    # one launch, no submissions: its place "P" is the section's last byte
    section = b"BOBCLNC1" + struct.pack("<II", 1, 0) + struct.pack("<IIII", 1, 1, 1, 1) + b"k" + struct.pack("<I", 1) + b"P"
    assert decode(section, "h") == ([{"kernel": "k", "grid": [1, 1, 1], "place": "P"}], [])
