"""sm_90 keeps a block's first KiB of shared memory for the system (probe s41 smem400; probe s41
newuser5 finding 7): `bobc sim` refuses a kernel's shared access below 0x400 there, naming the
instruction, the address and the rule, and the assembler refuses a `.shared` that leaves a block no
byte above it.  The base is NVIDIA's: ptxas -arch=sm_90 places a kernel's first `.shared` variable at
0x400 and compiles %reserved_smem_offset_end to 0x400; -arch=sm_86 places it at 0
(tests/sass/test_shared_base_s41.py).  Before: both ran clean on sm_90, and the certifier and
assembler said nothing."""
from __future__ import annotations

import numpy as np
import pytest

from bobc.errors import BobcError
from bobc.sim.faults import SimulationFault
from bobc.sim.kernel import buffer_addresses, run_kernel


def _reduce(at: int, shared: str) -> str:
    """Each thread stores its index at `at` + 4 tid, a barrier, thread t loads word t ^ 1 to out[t]."""
    return f""".kernel pairs
.shared {shared}
    S2R R0, SR_TID.X
    ULDC.64 UR4, c[0x0][memory_descriptor]
    SHF.L.U32 R1, R0, 0x2, RZ
    STS [R1+{at:#x}], R0
    BAR.SYNC.DEFER_BLOCKING 0x0
    LOP3.LUT R2, R1, 0x4, RZ, 0x3c, !PT
    LDS R4, [R2+{at:#x}]
    ULDC.64 UR6, c[0x0][param+0x0]
    LEA R10, P0, R0, UR6, 0x2
    IADD3.X R11, RZ, UR7, RZ, P0, !PT
    STG.E [R10.64], R4
    EXIT
"""


def _run(kernel: str, target: str):
    buffers = {"out": np.zeros(32, np.uint32)}
    at = buffer_addresses(buffers)
    return run_kernel(kernel, target, grid=(1,), block=(32,), params=int(at["out"]).to_bytes(8, "little"),
                      buffers=buffers)["out"]


def test_sm90_refuses_a_store_below_0x400_naming_the_instruction_address_and_rule():
    with pytest.raises(SimulationFault) as caught:
        _run(_reduce(0x200, "0x480"), "sm_90")
    message = caught.value.message
    assert "instruction at 0x0030 (STS [R1+0x200], R0)" in message, message
    assert "shared-memory access at 0x200 (4 bytes) is below 0x400" in message, message
    assert "on sm_90 the first 1024 bytes of a block's shared memory are the system's" in message, message
    assert "address the block's shared memory from 0x400" in message, message
    assert message.endswith("first faulting thread (0, 0, 0) of block (0, 0, 0) (warp 0, lane 0)"), message


def test_sm90_refuses_a_thread_that_strays_below_0x400_by_its_index():
    """Thread 0's word is at 0x3fc (0x3fc + 4 tid): only it strays, and it is the one named."""
    with pytest.raises(SimulationFault) as caught:
        _run(_reduce(0x3FC, "0x480"), "sm_90")
    assert "shared-memory access at 0x3fc (4 bytes) is below 0x400" in caught.value.message


@pytest.mark.parametrize(("target", "at"), [("sm_90", 0x400), ("sm_86", 0x0), ("sm_86", 0x400)])
def test_a_kernel_addressing_from_its_targets_base_runs(target, at):
    out = _run(_reduce(at, "0x480"), target)
    assert list(out) == [t ^ 1 for t in range(32)]


def test_sm90_shared_declaration_leaving_no_byte_of_its_own_is_refused_at_its_line():
    for shared in ("128", "0x400"):
        with pytest.raises(BobcError) as caught:
            _run(_reduce(0x0, shared), "sm_90")
        error = caught.value
        assert str(error.message).startswith(f".shared {shared} on sm_90 leaves a block no shared memory of its "
                                             "own: the first 1024 bytes of its shared window (0x0..0x3ff) are the "
                                             "system's"), error.message
        assert error.span is not None and (error.span.line, error.span.column) == (2, 9), error.span
        assert "declare .shared 0x400 more than the kernel uses" in error.hint, error.hint
    # sm_86 keeps its reserve past the block's bytes: a small declaration is the block's own
    assert list(_run(_reduce(0x0, "128"), "sm_86")) == [t ^ 1 for t in range(32)]
