"""Global accesses go through the memory descriptor in UR4:UR5 (desc[UR4]; ptxas loads it with
ULDC.64 from constant bank 0 before a kernel's first LDG or STG).  A kernel that overwrites either
half before an access faults on the H200 (session 14's first sm_90 product kernel kept a tile
coordinate in UR4); the simulator refuses the access by name."""
from __future__ import annotations

import numpy as np
import pytest

from bobc.sim.faults import SimulationFault
from bobc.sim.kernel import run_kernel

STORE = """.kernel probe
    ULDC.64 UR4, c[0x0][memory_descriptor]
    {clobber}
    MOV R2, c[0x0][param+0x0]
    MOV R3, c[0x0][param+0x4]
    MOV R4, 0x7
    STG.E [R2.64], R4
    EXIT
"""


def _run(clobber: str):
    return run_kernel(STORE.format(clobber=clobber), "sm_90", grid=(1,), block=(1,), params=["out"],
                      buffers={"out": np.zeros(1, np.uint32)})


def test_a_store_through_the_loaded_descriptor_lands():
    assert _run("")["out"][0] == 7


@pytest.mark.parametrize("clobber", ["UMOV UR4, 0x40", "S2UR UR5, SR_CTAID.X"])
def test_a_store_after_either_half_is_overwritten_is_refused(clobber):
    with pytest.raises(SimulationFault, match=r"through UR4, which holds no memory descriptor"):
        _run(clobber)
