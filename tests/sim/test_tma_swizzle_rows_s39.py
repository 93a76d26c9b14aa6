"""Where a swizzled TMA copy's box rows land when they are shorter than the swizzle's span (probe s39
tmacontract).

The oracle is the hardware: docs/tensor-maps.md "How a copy lands" (measured on the H200, and the
case f16-128b-short-rows of tests/gpu/test_tensor_map.py passing on the H100 and H200 in
tests/gpu/logs): with a swizzle, each box row takes the swizzle's whole span -- a 64-byte row under
the 128-byte swizzle leaves the span's other 64 bytes unwritten -- and each 16-byte chunk at shared
address A moves to A XOR (((A >> 7) & m) << 4), m = 1, 3, 7 for the 32-, 64- and 128-byte
swizzles.  The simulator used to pack the rows one after another (row r at r x the row's bytes),
so such a copy landed where no GPU puts it.

The kernel: thread 0 arms an mbarrier for the box's bytes and issues one UTMALDG.2D to shared
0x400; every thread waits on the barrier, then the warp copies shared [0x400, 0x400 + N) out.
"""
from __future__ import annotations

import numpy as np
import pytest

from bobc.nvidia.tensor_map import TiledTensor, encode_tiled
from bobc.sim.executor import POISON_WORD
from bobc.sim.kernel import buffer_addresses, run_kernel

BASE = 0x400                       # the tile's shared address (1024-aligned: the swizzle's own pattern)
KERNEL = """
.kernel tma_tile_copy
.shared 66568
    S2R R0, SR_TID.X
    ULDC.64 UR4, c[0x0][memory_descriptor]
    ULDC.64 UR24, c[0x0][param+0x0]    // the tensor map
    ULDC.64 UR10, c[0x0][param+0x10]   // the box's coordinates
    UMOV UR8, 0x400                    // the tile
    UMOV UR9, 0x10400                  // the mbarrier, past the tile (sm_90's first KiB is the system's)
    MOV R44, c[0x0][param+0x18]        // the box's bytes
    ISETP.NE.U32.AND P1, PT, R0, RZ, PT
    BSSY B0, issued
    @P1 BRA issued
    UMOV UR28, 0x1ffffe
    UMOV UR29, 0x7ffff800
    [B------:R-:W0:-:S02] FENCE.VIEW.ASYNC.S
    [B0-----:R0:W1:-:S01] SYNCS.EXCH.64 URZ, [UR9+0x0], UR28
    [B-1----:R1:W-:-:S06] MEMBAR.ALL.CTA
    [B-1----:R-:W1:-:S02] FENCE.VIEW.ASYNC.S
    [B------:R2:W-:-:S01] SYNCS.ARRIVE.TRANS64 RZ, [UR9], R44
    [B------:R3:W-:-:S10] UTMALDG.2D [UR8], [UR24]
issued:
    BSYNC B0
    MOV R42, 0x10400
    MOV R43, RZ
wait:
    [B------:R-:W4:-:S03] SYNCS.PHASECHK.TRANS64.TRYWAIT P0, [R42+URZ], R43
    @!P0 BRA wait
    SHF.L.U32 R2, R0, 0x2, RZ
    MOV R9, c[0x0][param+0x1c]
loop:
    LDS R5, [R2+0x400]
    IADD3 R6, P6, R2, c[0x0][param+0x8], RZ
    IADD3.X R7, RZ, c[0x0][param+0xc], RZ, P6, !PT
    STG.E desc[UR4][R6.64], R5
    IADD3 R2, R2, 0x80, RZ
    ISETP.LT.U32.AND P0, PT, R2, R9, PT
    @P0 BRA loop
    EXIT
"""
SPAN = {"32b": 32, "64b": 64, "128b": 128}

CASES = {
    # name: (rows x columns of binary16, box (columns, rows), swizzle, start (column, row))
    "64-byte rows, 128-byte swizzle": ((64, 256), (32, 32), "128b", (0, 0)),
    "32-byte rows, 64-byte swizzle": ((64, 256), (16, 8), "64b", (48, 5)),
    "32-byte rows, 128-byte swizzle": ((64, 256), (16, 16), "128b", (8, 3)),
    "128-byte rows, 128-byte swizzle (full span)": ((64, 256), (64, 16), "128b", (64, 2)),
}


def expected(host: np.ndarray, box, swizzle: str, start, room: int) -> tuple[np.ndarray, np.ndarray]:
    """(bytes, written mask) of shared [BASE, BASE + room) after the copy, by the rule above."""
    columns, rows = box
    tile = np.zeros((rows, columns), dtype=host.dtype)
    for r in range(rows):
        for c in range(columns):
            y, x = start[1] + r, start[0] + c
            if 0 <= y < host.shape[0] and 0 <= x < host.shape[1]:
                tile[r, c] = host[y, x]
    raw = tile.tobytes()
    row = columns * host.itemsize
    span = SPAN[swizzle]
    mask = (1, 3, 7)[span.bit_length() - 6]
    out, written = np.zeros(room, np.uint8), np.zeros(room, bool)
    for offset in range(0, len(raw), 16):
        address = BASE + offset // row * span + offset % row
        moved = address ^ (((address >> 7) & mask) << 4)
        out[moved - BASE:moved - BASE + 16] = np.frombuffer(raw[offset:offset + 16], np.uint8)
        written[moved - BASE:moved - BASE + 16] = True
    return out, written


@pytest.mark.parametrize("name", sorted(CASES))
def test_a_swizzled_copy_puts_each_box_row_at_the_start_of_a_span(name):
    shape, box, swizzle, start = CASES[name]
    host = (np.random.default_rng(len(name)).standard_normal(shape) * 4).astype(np.float16)
    pitch = shape[1] * 2
    nbytes = box[0] * box[1] * 2
    room = box[1] * SPAN[swizzle]              # the rows' spans: what the copy may touch
    buffers = {"tensor": host.reshape(-1).view(np.uint8).copy(), "map": np.zeros(128, np.uint8),
               "out": np.zeros(room, np.uint8)}
    at = buffer_addresses(buffers)
    buffers["map"][:] = np.frombuffer(encode_tiled(TiledTensor("float16", at["tensor"], shape[::-1], (pitch,), box,
                                                               swizzle=swizzle)), np.uint8)
    params = ["map", "out", np.int32(start[0]), np.int32(start[1]), np.uint32(nbytes), np.uint32(room)]
    got = run_kernel(KERNEL, "sm_90", (1, 1, 1), (32, 1, 1), params, buffers, shared_bytes=66560,
                     check_hazards=False)["out"]
    want, written = expected(host, box, swizzle, start, room)
    assert written.sum() == nbytes
    assert np.array_equal(got[written], want[written]), f"{name}: the box's bytes landed elsewhere"
    assert (got[~written] == POISON_WORD & 0xFF).all(), f"{name}: the copy wrote the spans' unwritten bytes"
