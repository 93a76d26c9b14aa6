"""GPFIFO ring entries: 8 bytes pointing the host at a pushbuffer segment.

Layout (SDK class/clc56f.h NV_GP_ENTRY, facts doc section 4):
dword0 GET 31:2 = address bits 31:2 (segments are dword aligned), FETCH 0
(0 UNCONDITIONAL, 1 CONDITIONAL; bobc writes 0), bit 1 named by no field in
clc56f.h (bobc writes 0); dword1 GET_HI 7:0 = address bits 39:32, bit 8 named by no
field in clc56f.h either (PRIV 8:8 is Kepler's, NVA06F_GP_ENTRY1_PRIV in open-gpu-doc
classes/host/cla06f.h; bobc writes 0), LEVEL 9 (0 MAIN, 1 SUBROUTINE), LENGTH 30:10 in
dwords, SYNC 31 (1 = wait for the previous segment's methods to finish before fetching this
one).
"""
from __future__ import annotations

from dataclasses import dataclass

from ..errors import BobcError

ENTRY_BYTES = 8

FIELDS: dict[str, tuple[int, int, int]] = {   # name -> (dword, high, low); every bit of the entry
    "FETCH": (0, 0, 0),
    "ENTRY0_BIT1": (0, 1, 1),       # no field in clc56f.h: named here so a decoder shows it
    "GET": (0, 31, 2),
    "GET_HI": (1, 7, 0),
    "PRIV": (1, 8, 8),              # no field in clc56f.h: Kepler's cla06f.h NVA06F_GP_ENTRY1_PRIV
    "LEVEL": (1, 9, 9),
    "LENGTH": (1, 30, 10),
    "SYNC": (1, 31, 31),
}


@dataclass(frozen=True)
class Entry:
    address: int        # GPU address of the segment
    length: int         # dwords
    sync: bool = False
    level: int = 0      # MAIN
    priv: int = 0

    def to_bytes(self) -> bytes:
        if self.address & 3 or self.address >> 40:
            raise BobcError(f"a GPFIFO entry needs a dword-aligned address below 2^40, not {self.address:#x}")
        if not 0 < self.length < 1 << 21:
            raise BobcError(f"a GPFIFO entry's length is 1..2^21-1 dwords, not {self.length}")
        dword0 = self.address & 0xFFFFFFFC
        dword1 = ((self.address >> 32) & 0xFF) | (self.priv << 8) | (self.level << 9) | (self.length << 10) \
            | (int(self.sync) << 31)
        return dword0.to_bytes(4, "little") + dword1.to_bytes(4, "little")

    def dwords(self) -> tuple[int, int]:
        raw = self.to_bytes()
        return int.from_bytes(raw[:4], "little"), int.from_bytes(raw[4:], "little")

    def describe(self) -> str:
        return (f"address {self.address:#x} length {self.length} dwords ({4 * self.length} bytes)"
                f" level {'SUBROUTINE' if self.level else 'MAIN'} sync {'WAIT' if self.sync else 'PROCEED'}")


def _field(dwords: tuple[int, int], name: str) -> int:
    index, high, low = FIELDS[name]
    return (dwords[index] >> low) & ((1 << (high - low + 1)) - 1)


def decode_entry(raw: bytes) -> Entry:
    if len(raw) != ENTRY_BYTES:
        raise BobcError(f"a GPFIFO entry is {ENTRY_BYTES} bytes, not {len(raw)}")
    dw = (int.from_bytes(raw[:4], "little"), int.from_bytes(raw[4:], "little"))
    address = (_field(dw, "GET") << 2) | (_field(dw, "GET_HI") << 32)
    return Entry(address, _field(dw, "LENGTH"), bool(_field(dw, "SYNC")), _field(dw, "LEVEL"), _field(dw, "PRIV"))


def decode(raw: bytes) -> list[Entry]:
    if len(raw) % ENTRY_BYTES:
        raise BobcError(f"a GPFIFO image is whole {ENTRY_BYTES}-byte entries; this one has {len(raw)} bytes")
    return [decode_entry(raw[i:i + ENTRY_BYTES]) for i in range(0, len(raw), ENTRY_BYTES)]
