"""The simulator's lane-selected constant (a packed-half opcode's `c[0x0] [imm].H0_H0`, nvdisasm's
spelling of ptxas's .f16 parameter read, HADD2.F32 R0, -RZ, c[0x0] [0x16c].H0_H0): the selected
binary16 half converted exactly, and only its 2 bytes need be among the parameters the launch gave
(ptxas's block ends at a last .f16's last byte); the other half past them faults by name.
(ptxas's own kernel: tests/sass/test_param_shapes.py.)"""
from __future__ import annotations

import numpy as np
import pytest

from bobc.sim.faults import SimulationFault
from bobc.sim.kernel import buffer_addresses, run_kernel

TARGETS = pytest.mark.parametrize("target", ["sm_86", "sm_90"])
CODE = """    ULDC.64 UR4, c[0x0][memory_descriptor]
    LDC.64 R2, c[0x0][param+0x0]
    HADD2.F32 R5, -RZ, c[0x0] [param+0x8].{lane}
    STG.E [R2.64], R5
    EXIT
"""


def _run(target, lane, halves: bytes):
    buffers = {"out": np.zeros(1, np.float32)}
    params = buffer_addresses(buffers)["out"].to_bytes(8, "little") + halves
    return run_kernel(CODE.format(lane=lane), target, grid=1, block=1, params=params, buffers=buffers)["out"][0]


@TARGETS
def test_each_half_is_read_and_converted(target):
    low, high = np.float16(-1.5), np.float16(2.0 ** -24)       # a binary16 subnormal: exact in binary32
    halves = low.tobytes() + high.tobytes()
    assert _run(target, "H0_H0", halves) == np.float32(low)
    assert _run(target, "H1_H1", halves) == np.float32(high)


@TARGETS
def test_only_the_selected_half_need_be_given(target):
    assert _run(target, "H0_H0", np.float16(3.25).tobytes()) == np.float32(3.25)   # a 10-byte block
    with pytest.raises(SimulationFault, match="parameter bytes 10 to 11, past the 10 parameter bytes"):
        _run(target, "H1_H1", np.float16(3.25).tobytes())
