"""An instruction guarded by @!PT never executes (probe s41 smem400).

PTX ISA / SASS: a guard predicate that is false disables the instruction for the thread, and !PT is
false for every thread.  ptxas writes `@!PT LDS RZ, [RZ]` into sm_90 code (tests/sass/data's
async_copy); the simulator ran it as unguarded (its guard check skipped PT, negated or not), so a
never-executed load at shared 0 was checked -- against a block without shared memory, or against
sm_90's system KiB -- as if it ran."""
from __future__ import annotations

import numpy as np
import pytest

from bobc.sim.kernel import buffer_addresses, run_kernel


@pytest.mark.parametrize("target", ["sm_86", "sm_90"])
def test_a_never_guarded_store_writes_nothing_and_is_not_checked(target):
    # a block of no shared memory: the store, were it run, would be out of bounds
    run_kernel(".kernel never\n    S2R R0, SR_TID.X\n    @!PT STS [RZ], R0\n    EXIT\n", target, grid=(1,), block=(32,),
               params=[], buffers={})


@pytest.mark.parametrize("target", ["sm_86", "sm_90"])
def test_a_never_guarded_move_leaves_its_register(target):
    kernel = """.kernel never_move
    S2R R0, SR_TID.X
    ULDC.64 UR4, c[0x0][memory_descriptor]
    @!PT MOV R0, 0x7
    ULDC.64 UR6, c[0x0][param+0x0]
    LEA R10, P0, R0, UR6, 0x2
    IADD3.X R11, RZ, UR7, RZ, P0, !PT
    STG.E [R10.64], R0
    EXIT
"""
    buffers = {"out": np.zeros(32, np.uint32)}
    at = buffer_addresses(buffers)
    out = run_kernel(kernel, target, grid=(1,), block=(32,), params=int(at["out"]).to_bytes(8, "little"),
                     buffers=buffers)["out"]
    assert list(out) == list(range(32))        # each thread's own index, not 7
