"""A kernel driven by a table of pointers in its parameters (docs/kernel-contracts.md, `//@ table`):
each block reads its own entry through an indexed constant read, so one load instruction reaches
a different buffer in each block.  The simulator holds each block to one resident per memory
instruction (bobc.sim.memory.Residency): blocks in different buffers run, and one instruction of one
block that reaches two buffers is still refused as a stray pointer, naming both."""
from __future__ import annotations

import numpy as np
import pytest

from bobc.sim.faults import OutOfBounds
from bobc.sim.kernel import buffer_addresses, run_kernel


def _kernel(entry: str) -> str:
    """out[32 block + tid] = table[entry][tid]: entry is R1 (the block) or R3 (the lane's parity)."""
    return f"""
.kernel table_reader
    S2R R0, SR_TID.X
    S2R R1, SR_CTAID.X
    ULDC.64 UR4, c[0x0][memory_descriptor]
    LOP3.LUT R3, R0, 0x1, RZ, 0xc0, !PT
    SHF.L.U32 R2, {entry}, 0x3, RZ
    LDC.64 R4, c[0x0][R2+param+0x8]
    LEA R6, P0, R0, R4, 0x2
    IADD3.X R7, RZ, R5, RZ, P0, !PT
    LDG.E R8, [R6.64]
    LEA R9, R1, R0, 0x5
    ULDC.64 UR6, c[0x0][param+0x0]
    LEA R10, P0, R9, UR6, 0x2
    IADD3.X R11, RZ, UR7, RZ, P0, !PT
    STG.E [R10.64], R8
    EXIT
"""


def _run(entry: str, target: str = "sm_86"):
    buffers = {"out": np.zeros(64, np.uint32), "a": np.arange(32, dtype=np.uint32),
               "b": np.arange(100, 132, dtype=np.uint32)}
    at = buffer_addresses(buffers)
    params = b"".join(int(at[name]).to_bytes(8, "little") for name in ("out", "a", "b"))
    return run_kernel(_kernel(entry), target, grid=(2,), block=(32,), params=params, buffers=buffers)


@pytest.mark.parametrize("target", ["sm_86", "sm_90"])
def test_each_block_may_read_its_own_entrys_buffer(target):
    assert list(_run("R1", target)["out"]) == list(range(32)) + list(range(100, 132))


def test_one_instruction_of_one_block_in_two_buffers_is_a_stray():
    with pytest.raises(OutOfBounds) as caught:
        _run("R3")
    message = caught.value.message
    assert "LDG.E R8, [R6.64]" in message and "strays" in message and "the resident this instruction addresses" in message
