"""Races between the blocks of one launch, through kernels run in the simulator (probe s40 mutants4:
mutants of bobc.sim.races that the s39 tests let live).  Each expectation is the PTX memory model's
(PTX ISA, "Memory Consistency Model"), worked by hand for the kernel:

- a non-atomic read-modify-write of one word by two blocks (load, add, store) is a data race;
- a race at the first byte of a buffer names that buffer, 0 bytes in;
- the split-K ticket with three blocks: every atomic on the ticket continues the release sequence
  each earlier block's fence-then-atomic heads, so the block drawing the last ticket is ordered
  after *both* other blocks' stores (the release sequence is not just the last releaser);
- a write after a read (the last block overwrites what the others read before their release) is
  ordered as well as a read after a write: "happens before" in either direction orders a pair;
- a TMA copy's row of binary16 elements starting at column 3 reads bytes [6, 6 + 2 x width) of
  the row, not the whole words around them: a store by another block to the row's last byte races,
  one to the byte just after it or just before its first does not.
"""
from __future__ import annotations

import numpy as np
import pytest

from bobc.sim.faults import BlocksRace
from bobc.sim.kernel import buffer_addresses, run_kernel

from .conftest import above_shared_base

TARGETS = pytest.mark.parametrize("target", ["sm_86", "sm_90"])


def _pointers(at, *names) -> bytes:
    return b"".join(int(at[name]).to_bytes(8, "little") for name in names)


RMW = """
.kernel increments
    S2R R0, SR_TID.X
    ULDC.64 UR4, c[0x0][memory_descriptor]
    ULDC.64 UR6, c[0x0][param+0x0]
    LEA R10, P0, R0, UR6, 0x2
    IADD3.X R11, RZ, UR7, RZ, P0, !PT
    LDG.E R2, [R10.64]
    IADD3 R2, R2, 0x1, RZ
    STG.E [R10.64], R2
    EXIT
"""


@TARGETS
def test_two_blocks_incrementing_one_word_without_an_atomic_race(target):
    """out[tid] += 1 by every block: each block's load and store meet the other block's store."""
    buffers = {"out": np.zeros(32, np.uint32)}
    at = buffer_addresses(buffers)
    with pytest.raises(BlocksRace) as caught:
        run_kernel(RMW, target, grid=(2,), block=(32,), params=_pointers(at, "out"), buffers=buffers)
    assert "blocks race on 4 bytes at" in caught.value.message and "(in out, 0 bytes in)" in caught.value.message


def test_one_block_incrementing_runs():
    buffers = {"out": np.zeros(32, np.uint32)}
    at = buffer_addresses(buffers)
    out = run_kernel(RMW, "sm_86", grid=(1,), block=(32,), params=_pointers(at, "out"), buffers=buffers)["out"]
    assert list(out) == [1] * 32


STORE_BYTE = """
.kernel stores
    S2R R0, SR_TID.X
    ULDC.64 UR4, c[0x0][memory_descriptor]
    ULDC.64 UR6, c[0x0][param+0x8]
    IADD3 R10, P0, R0, UR6, RZ
    IADD3.X R11, RZ, UR7, RZ, P0, !PT
    STG.E.U8 [R10.64], R0
    EXIT
"""


def test_a_race_at_the_first_byte_of_a_later_buffer_names_that_buffer():
    """The race is on out's byte 0 (both blocks' thread 0); `first` is another resident before it."""
    buffers = {"first": np.zeros(64, np.uint8), "out": np.zeros(64, np.uint8)}
    at = buffer_addresses(buffers)
    with pytest.raises(BlocksRace) as caught:
        run_kernel(STORE_BYTE, "sm_86", grid=(2,), block=(32,), params=_pointers(at, "first", "out"), buffers=buffers)
    assert f"blocks race on 1 byte at {at['out']:#x} (in out, 0 bytes in)" in caught.value.message, caught.value.message


def _ticket_kernel(blocks: int, last_writes_data: bool) -> str:
    """Block c: partial[32 c + tid] = data[tid] + 32 c + tid; MEMBAR.ALL.GPU; thread 0 draws a ticket
    (atom.inc wrapping after blocks - 1); the block drawing the last one writes out[tid] = the sum of
    every block's partial[32 k + tid] and, when `last_writes_data`, data[tid] = 0 (what the others read)."""
    sums = "\n".join(f"    LDG.E R17, [R14.64+{hex(0x80 * k)}]\n    IADD3 R18, R18, R17, RZ" for k in range(blocks))
    clear = """    ULDC.64 UR12, c[0x0][param+0x18]
    LEA R22, P0, R0, UR12, 0x2
    IADD3.X R23, RZ, UR13, RZ, P0, !PT
    STG.E [R22.64], RZ""" if last_writes_data else ""
    return f"""
.kernel ticket_sum
.shared 4
    S2R R0, SR_TID.X
    S2R R1, SR_CTAID.X
    ULDC.64 UR4, c[0x0][memory_descriptor]
    ULDC.64 UR12, c[0x0][param+0x18]
    LEA R22, P0, R0, UR12, 0x2
    IADD3.X R23, RZ, UR13, RZ, P0, !PT
    LDG.E R24, [R22.64]
    LEA R9, R1, R0, 0x5
    IADD3 R12, R9, R24, RZ
    ULDC.64 UR6, c[0x0][param+0x8]
    LEA R10, P0, R9, UR6, 0x2
    IADD3.X R11, RZ, UR7, RZ, P0, !PT
    STG.E [R10.64], R12
    MEMBAR.ALL.GPU
    BAR.SYNC.DEFER_BLOCKING 0x0
    ISETP.NE.U32.AND P0, PT, R0, RZ, PT
    ULDC.64 UR8, c[0x0][param+0x10]
    MOV R2, UR8
    MOV R3, UR9
    MOV R5, {hex(blocks - 1)}
    MOV R6, RZ
    @!P0 ATOMG.E.INC.STRONG.GPU PT, R4, [R2.64], R5
    @!P0 STS [R6], R4
    BAR.SYNC.DEFER_BLOCKING 0x0
    LDS R4, [R6]
    ISETP.NE.U32.AND P1, PT, R4, R5, PT
    @P1 EXIT
    LEA R14, P0, R0, UR6, 0x2
    IADD3.X R15, RZ, UR7, RZ, P0, !PT
    MOV R18, RZ
{sums}
    ULDC.64 UR10, c[0x0][param+0x0]
    LEA R20, P0, R0, UR10, 0x2
    IADD3.X R21, RZ, UR11, RZ, P0, !PT
    STG.E [R20.64], R18
{clear}
    EXIT
"""


def _ticket(blocks: int, last_writes_data: bool, target: str):
    data = np.arange(100, 132, dtype=np.uint32)
    buffers = {"out": np.zeros(32, np.uint32), "partial": np.zeros(32 * blocks, np.uint32),
               "ticket": np.zeros(1, np.uint32), "data": data.copy()}
    at = buffer_addresses(buffers)
    return run_kernel(above_shared_base(_ticket_kernel(blocks, last_writes_data), target), target, grid=(blocks,), block=(32,),
                      params=_pointers(at, "out", "partial", "ticket", "data"), buffers=buffers)


@TARGETS
def test_the_last_of_three_blocks_is_ordered_after_both_others(target):
    """Blocks 0 and 1 each release on the ticket; the release sequence holds both, so block 2's
    loads of both partials are ordered.  out[tid] = sum over c of (data[tid] + 32 c + tid)."""
    got = _ticket(3, False, target)
    tid = np.arange(32)
    assert list(got["out"]) == list(3 * (100 + tid) + 3 * tid + 32 * (0 + 1 + 2))


@TARGETS
def test_the_last_block_overwriting_what_the_others_read_before_their_release_runs(target):
    """A write after a read ordered by the ticket (the readers released, the writer acquired)."""
    got = _ticket(2, True, target)
    tid = np.arange(32)
    assert list(got["out"]) == list(2 * (100 + tid) + 2 * tid + 32) and list(got["data"]) == [0] * 32


def _tma_kernel() -> str:
    """tests/sim/test_tma_swizzle_rows_s39.py's copy in block 0; block 1's thread 0 stores one byte
    at tensor + param+0x28 and exits."""
    from tests.sim.test_tma_swizzle_rows_s39 import KERNEL
    head, rest = KERNEL.split("    ULDC.64 UR24", 1)
    return head + """    S2R R1, SR_CTAID.X
    ISETP.EQ.U32.AND P2, PT, R1, RZ, PT
    @P2 BRA copy
    ISETP.NE.U32.AND P3, PT, R0, RZ, PT
    @P3 EXIT
    MOV R32, c[0x0][param+0x28]
    IADD3 R30, P0, R32, c[0x0][param+0x20], RZ
    IADD3.X R31, RZ, c[0x0][param+0x24], RZ, P0, !PT
    STG.E.U8 [R30.64], R0
    EXIT
copy:
    ULDC.64 UR24""" + rest


def _tma_and_a_byte(byte: int):
    from bobc.nvidia.tensor_map import TiledTensor, encode_tiled
    shape, box, start = (16, 64), (16, 8), (3, 0)           # rows x columns of binary16; box (columns, rows)
    buffers = {"tensor": np.arange(shape[0] * shape[1], dtype=np.float16).view(np.uint8).copy(),
               "map": np.zeros(128, np.uint8), "out": np.zeros(256, np.uint8)}
    at = buffer_addresses(buffers)
    buffers["map"][:] = np.frombuffer(encode_tiled(TiledTensor("float16", at["tensor"], shape[::-1], (2 * shape[1],),
                                                               box)), np.uint8)
    params = ["map", "out", np.int32(start[0]), np.int32(start[1]), np.uint32(box[0] * box[1] * 2), np.uint32(256),
              "tensor", np.uint32(byte)]
    return run_kernel(_tma_kernel(), "sm_90", (2, 1, 1), (32, 1, 1), params, buffers, shared_bytes=66560,
                      check_hazards=False)


def test_a_store_to_the_last_byte_of_a_tma_row_races_with_the_copy():
    """Row 0 of the box at column 3 covers bytes [6, 38) of the tensor (16 binary16 elements from
    byte 2 x 3): byte 37 is the row's last, in the word [36, 40) the row only half covers."""
    with pytest.raises(BlocksRace) as caught:
        _tma_and_a_byte(37)
    assert "(in tensor, 37 bytes in)" in caught.value.message, caught.value.message


@pytest.mark.parametrize("byte", [5, 38])
def test_a_store_to_a_byte_beside_a_tma_row_does_not_race(byte):
    """Byte 5 is just before row 0's first (6), byte 38 just after its last (37)."""
    _tma_and_a_byte(byte)
