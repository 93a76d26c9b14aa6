"""A binary64 instruction's immediate beyond binary32's range runs (probe s42 ptxcover): ptxas's div.rn.f64 slow
path scales by `DMUL R2, R4, 8.98846567431157953865e+307` (2^1023), and the simulator's front end packed every
decimal immediate into binary32 bits first, so it stopped with Python's OverflowError ("float too large to pack
with f format", a traceback) before running anything.  The expected product is NumPy's binary64 (IEEE 754: exact
here, a power of two times 1.5)."""
from __future__ import annotations

import numpy as np
import pytest

from bobc.sim.kernel import run_kernel

SCALE = """
.kernel scale
.registers 16
    MOV R4, 0x0
    MOV R5, 0x3ff80000
    DMUL R2, R4, 8.98846567431157953865e+307
    ULDC.64 UR4, c[0x0][memory_descriptor]
    ULDC.64 UR6, c[0x0][param+0x0]
    MOV R6, UR6
    MOV R7, UR7
    STG.E.64 [R6.64], R2
    EXIT
"""


@pytest.mark.parametrize("target", ["sm_86", "sm_90"])
def test_dmul_by_an_immediate_past_binary32s_range(target):
    out = run_kernel(SCALE, target, grid=1, block=1, params=["out"], buffers={"out": np.zeros(1, np.float64)},
                     check_hazards=False)["out"]
    assert out[0] == np.float64(1.5) * np.float64(2.0) ** 1023
