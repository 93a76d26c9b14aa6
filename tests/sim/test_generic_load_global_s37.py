"""sm_90's descriptor-less generic load of global memory through run_kernel (probe s37 docs5).

op_LD read global memory without naming the addressing threads' blocks for the per-block
residency rule (bobc.sim.memory.Residency), so `LD.E R4, [R2]` stopped with an AssertionError
traceback ("the addressing threads' blocks") where docs/simulator.md says it runs.  The oracle
for PRMT is PTX's prmt table, written here from the ISA.
"""
from __future__ import annotations

import numpy as np

from bobc.sim.kernel import Pointer, run_kernel


# PTX ISA, prmt.b32.f4e: d byte i = {b, a} byte ((c & 3) + i) (forward 4 extract).
def prmt_f4e(a: int, b: int, c: int) -> int:
    source = a.to_bytes(4, "little") + b.to_bytes(4, "little")
    return int.from_bytes(bytes(source[((c & 3) + i) & 7] for i in range(4)), "little")


GENERIC_LOAD_THEN_PRMT = """
    S2R R0, SR_TID.X
    S2R R6, SR_CTAID.X
    ULDC.64 UR4, c[0x0][memory_descriptor]
    LDC.64 R2, c[0x0][param+0x0]
    IMAD R0, R6, 0x20, R0
    IMAD.WIDE R2, R0, 0x8, R2
    LD.E R4, [R2]
    PRMT.F4E R5, R4, 0x1, R4
    STG.E [R2.64+0x4], R5
    EXIT
"""


def test_a_generic_load_of_global_memory_runs_and_prmt_f4e_follows_ptx():
    """sm_90's descriptor-less LD.E of global memory, in two blocks (the residency rule is per
    block), and PRMT.F4E: both run, to PTX's definitions."""
    words = np.zeros((64, 2), dtype=np.uint32)
    words[:, 0] = [0x44332211 + 0x01010101 * i for i in range(64)]
    out = run_kernel(GENERIC_LOAD_THEN_PRMT, "sm_90", grid=(2,), block=(32,), params=[Pointer("w")],
                     buffers={"w": words})["w"]
    assert (out[:, 0] == words[:, 0]).all()
    for i in range(64):
        a = int(words[i, 0])
        assert int(out[i, 1]) == prmt_f4e(a, a, 1), i
