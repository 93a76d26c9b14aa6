"""Bits session 43's GPU run (an H100, tests/gpu/test_sim_probes_gpu.py, log tests/gpu/logs/2026-12-07-s43-*)
settled where the PTX ISA leaves them open, held here on the simulator's models:

- MUFU.RCP64H / MUFU.RSQ64H of a NaN, and MUFU.RSQ64H of a negative number, write the high word 0x7fffffff
  (the GPU's word for operand high words 0x7ff80000 and 0xbff00000; the simulator had kept NumPy's quiet NaN,
  0x7ff80000 / 0xfff80000);
- fma.rn.relu.bf16 / .bf16x2 of a -0 result gives +0 (0 * -109 + -0 on the GPU: 0x0000; the simulator had
  kept 0x8000 as the ISA's "clamps the result to 0 if negative" reads).
"""
from __future__ import annotations

import numpy as np
import pytest

from bobc.sim.executor import _mufu64h
from bobc.sim.kernel import run_kernel


@pytest.mark.parametrize("function, high", [("RCP64H", 0x7FF80000), ("RSQ64H", 0x7FF80000), ("RCP64H", 0xFFF80000),
                                            ("RSQ64H", 0xBFF00000), ("RSQ64H", 0xFFF00000)])
def test_a_nan_seed_is_the_gpus_word(function, high):
    assert int(_mufu64h(function, np.array([high], np.uint32))[0]) == 0x7FFFFFFF


@pytest.mark.parametrize("arch", ["sm_86", "sm_90"])
def test_relu_of_a_negative_zero_bfloat16_is_positive_zero(arch):
    base = {"sm_86": 0x160, "sm_90": 0x210}[arch]          # the targets' kernel parameter base
    # low half: 0 * -109 (0xc2da) + -0 = -0; high half: -0.375 (0xbec0) * 1 + -0 = -0.375: both +0 after .RELU
    out = run_kernel(".kernel t\n.registers 16\n"
                     "S2R R0, SR_TID.X\n"
                     "MOV R1, 0xbec00000\nMOV R2, 0x3f80c2da\nMOV R3, 0x80008000\n"
                     "HFMA2.BF16_V2.RELU R4, R1, R2, R3\n"
                     "ULDC.64 UR4, c[0x0][memory_descriptor]\n"
                     f"MOV R6, c[0x0][{base:#x}]\nMOV R7, c[0x0][{base + 4:#x}]\nSTG.E [R6.64], R4\nEXIT\n",
                     arch, grid=(1, 1, 1), block=(1, 1, 1), params=["o"], buffers={"o": np.zeros(1, np.uint32)},
                     check_hazards=False)["o"]
    assert int(out[0]) == 0
