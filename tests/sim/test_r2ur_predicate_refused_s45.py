"""sm_86's `R2UR P0, URZ, R7` (ptxas 13's test of a member mask before `@!P0 BRA.CONV UR6`, user_forms.ptx
shfl_loaded_mask; assembled since s44) is refused by name (probe s45 hazards4 finding 5): the executor ran it as
`R2UR Ud, Rs`, reading its second operand, URZ (63), as R63 -- "uses R63, but the QMD allocates 8 registers" for a
kernel that names no R63, or, with 64 registers, P0 set from R63's value.  NVIDIA publishes no semantics for the
predicate (docs/simulator.md, "Special registers")."""
from __future__ import annotations

import numpy as np
import pytest

from bobc.sim.faults import Unmodeled
from bobc.sim.kernel import Pointer, run_kernel

SOURCE = """.kernel k
.registers {registers}
    ULDC.64 UR4, c[0x0][memory_descriptor]
    LDC.64 R2, c[0x0][RZ+param+0x0]
    MOV R7, 0xffffffff
    R2UR P0, URZ, R7
    @P0 STG.E [R2.64], R7
    EXIT
"""


@pytest.mark.parametrize("registers", [16, 64])
def test_r2ur_with_a_predicate_result_is_refused_by_name(registers):
    with pytest.raises(Unmodeled) as caught:
        run_kernel(SOURCE.format(registers=registers), "sm_86", grid=1, block=32, params=[Pointer("out")],
                   buffers={"out": np.zeros(32, np.uint32)})
    assert "R2UR with a predicate result" in caught.value.message and "R63" not in caught.value.message
    assert caught.value.span.line == 6
