"""An atomic writes: `bobc sim` and `run_kernel(contract=True)` hold its bytes to what the kernel's
contract says the launch writes, as a plain store's (probe s47 newuser12).

Before, RED / REDG and ATOMG were checked as reads only, so a contract declaring the atomic's
pointer `read` was accepted -- while the launch order (docs/launch-order.md) takes a `read` pointer's
bytes as bytes the launch never writes, and may run another launch touching them beside it.  The
expected outcome is the PTX ISA's: red / atom "perform a read-modify-write" of the location, so the
location is written; a contract's `read-write` (docs/kernel-contracts.md) is what covers it."""
from __future__ import annotations

import numpy as np
import pytest

from bobc.sim.faults import SimulationFault
from bobc.sim.kernel import Pointer, run_kernel

RED = {"sm_86": "RED.E.ADD.F32.FTZ.RN.STRONG.GPU", "sm_90": "REDG.E.ADD.F32.FTZ.RN.STRONG.GPU"}


def _kernel(target: str, access: str, atomic: str) -> str:
    """Thread t adds 1.0 to word t % 4 of the sums (an atomic a word shared by 8 threads)."""
    body = (f"    {RED[target]} [R2.64], R5\n" if atomic == "red" else
            "    ATOMG.E.INC.STRONG.GPU PT, R6, [R2.64], R4\n")
    return (f"//@ block 32\n"
            f"//@ param 0 pointer {access} 16 the sums\n"
            f".kernel atomic_sums\n"
            f".registers 16\n"
            f"    S2R R0, SR_TID.X\n"
            f"    ULDC.64 UR4, c[0x0][memory_descriptor]\n"
            f"    LDC.64 R2, c[0x0][RZ+param+0x0]\n"
            f"    LOP3.LUT R0, R0, 0x3, RZ, 0xc0, !PT\n"
            f"    IMAD.WIDE.U32 R2, R0, 0x4, R2\n"
            f"    MOV R5, 0x3f800000\n"
            f"    MOV R4, 0x7fffffff\n"
            + body +
            f"    EXIT\n"
            f"done:\n"
            f"    BRA done\n")


def _run(target, access, atomic):
    sums = np.zeros(4, np.float32 if atomic == "red" else np.uint32)
    return run_kernel(_kernel(target, access, atomic), target, grid=(1,), block=(32,), params=[Pointer("sums")],
                      buffers={"sums": sums}, contract=True)["sums"]


@pytest.mark.parametrize("target", ["sm_86", "sm_90"])
@pytest.mark.parametrize("atomic", ["red", "atomg"])
def test_an_atomic_through_a_read_pointer_is_refused_s47(target, atomic):
    with pytest.raises(SimulationFault) as caught:
        _run(target, "read", atomic)
    message = caught.value.message
    assert "writes bytes its kernel's contract does not say it writes" in message, message
    assert "the sums" in message or "param 0" in message, message


@pytest.mark.parametrize("target", ["sm_86", "sm_90"])
@pytest.mark.parametrize("atomic", ["red", "atomg"])
def test_an_atomic_through_a_read_write_pointer_runs_s47(target, atomic):
    sums = _run(target, "read-write", atomic)
    # 8 threads a word: eight additions of 1.0 (exact in binary32), or eight increments below the bound
    assert sums.tolist() == [8, 8, 8, 8]
