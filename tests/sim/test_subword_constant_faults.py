"""The simulator's sub-word constant loads (LDC / ULDC .U8 / .S8 / .U16 / .S16) on written SASS: each
byte and half word of a parameter block, zero- or sign-extended as PTX's ld.param.u8 / .s8 / .u16 /
.s16 gives it; an odd offset for a 2-byte read (through an index register: the assembler refuses the
written one) and a read past the parameter bytes the launch was given fault, naming the instruction.
(ptxas's own kernels: tests/sass/test_subword_constant_loads.py.)"""
from __future__ import annotations

import numpy as np
import pytest

from bobc.sim.faults import SimulationFault
from bobc.sim.kernel import buffer_addresses, run_kernel

TARGETS = pytest.mark.parametrize("target", ["sm_86", "sm_90"])
BYTES = bytes([0x80, 0x7f, 0xff, 0x01, 0x00, 0x80, 0xfe, 0xff])   # parameter bytes 8..15

LOADS = """    S2R R0, SR_TID.X
    ULDC.64 UR4, c[0x0][memory_descriptor]
    LDC.64 R2, c[0x0][param+0x0]
    {op} {dest}, c[0x0][{index}param+{offset}]
    {move}
    STG.E [R2.64], R5
    EXIT
"""


def _run(target, op, offset, index="", block=None, given=None):
    uniform = op.startswith("ULDC")
    text = LOADS.format(op=op, dest="UR6" if uniform else "R5", index=index, offset=hex(offset),
                        move="MOV R5, UR6" if uniform else "")
    buffers = {"out": np.zeros(1, np.uint32)}
    params = buffer_addresses(buffers)["out"].to_bytes(8, "little") + (BYTES if block is None else block)
    return run_kernel(text, target, grid=1, block=1, params=params[:given] if given else params,
                      buffers=buffers)["out"][0]


def _ptx(kind: str, data: bytes) -> int:
    """ld.param.<kind> into a .b32 register: PTX's zero (u) or sign (s) extension of the bytes."""
    value = int.from_bytes(data, "little")
    bits = 8 * len(data)
    if kind.startswith("s") and value >> (bits - 1):
        value -= 1 << bits
    return value & 0xffffffff


@TARGETS
@pytest.mark.parametrize("op", ["LDC.U8", "LDC.S8", "ULDC.U8", "ULDC.S8", "LDC.U16", "LDC.S16",
                                "ULDC.U16"])
def test_each_byte_and_half_word(target, op):
    size = 2 if op.endswith("16") else 1
    kind = op.split(".")[1].lower()
    for at in range(0, len(BYTES), size):
        got = int(_run(target, op, 8 + at))
        assert got == _ptx(kind, BYTES[at:at + size]), (op, at, hex(got))


@TARGETS
def test_indexed_reads(target):
    """c[0x0][Rn+base] (ptxas -O0's form): the index register's value is part of the offset."""
    text = """    S2R R0, SR_TID.X
    ULDC.64 UR4, c[0x0][memory_descriptor]
    LDC.64 R2, c[0x0][param+0x0]
    MOV R4, 0x5
    LDC.S8 R5, c[0x0][R4+param+0x8]
    MOV R6, 0x6
    LDC.S16 R7, c[0x0][R6+param+0x8]
    STG.E [R2.64], R5
    STG.E [R2.64+0x4], R7
    EXIT
"""
    buffers = {"out": np.zeros(2, np.uint32)}
    params = buffer_addresses(buffers)["out"].to_bytes(8, "little") + BYTES
    out = run_kernel(text, target, grid=1, block=1, params=params, buffers=buffers)["out"]
    assert [int(x) for x in out] == [_ptx("s8", BYTES[5:6]), _ptx("s16", BYTES[6:8])]


@TARGETS
def test_odd_half_word_through_an_index_faults(target):
    text = """    MOV R4, 0x1
    LDC.U16 R5, c[0x0][R4+param+0x8]
    EXIT
"""
    with pytest.raises(SimulationFault, match=r"LDC.U16 .*reads 2 bytes of constant bank 0 at 0x[0-9a-f]+, not a multiple of 2"):
        run_kernel(text, target, grid=1, block=1, params=bytes(16))


@TARGETS
def test_a_read_past_the_given_parameters_faults(target):
    with pytest.raises(SimulationFault, match=r"parameter bytes 11 to 11, past the 11 parameter bytes"):
        _run(target, "ULDC.U8", 11, given=11)
    # the byte before it was given: read as given
    assert int(_run(target, "LDC.U8", 10, given=11)) == BYTES[2]
