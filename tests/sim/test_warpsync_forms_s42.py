"""WARPSYNC.COLLECTIVE (sm_90) and WARPSYNC.EXCLUSIVE (sm_86) are refused by name (Unmodeled), never run
as no-ops (docs/simulator.md, "Races within a warp" and "Limits").

Why refused: neither is a PTX instruction -- they are ptxas's lowering of a warp collective whose
lanes may be diverged (sm_90: `WARPSYNC.COLLECTIVE Rm, target; <collective>; ENDCOLLECTIVE; target:`,
inline at -O0 and on BRA.DIV's divergent path at -O3; sm_86: WARPSYNC.EXCLUSIVE in the called
`__cuda_reduxsync_*` helpers, as the -O0 listing below shows) -- and NVIDIA publishes no semantics for
them (which lanes wait, which run the region, where its target sends them).  Before session 42 both
ran as no-ops (WARPSYNC was a NO_EFFECT opcode whatever its modifiers): the hand-written kernel below,
whose lanes 0-15 shuffle from lanes 16-31 after `WARPSYNC.COLLECTIVE` / `.EXCLUSIVE` on a path the other
lanes had not yet run, was accepted with the other lanes' stale registers."""
from __future__ import annotations

import subprocess
import tempfile
from pathlib import Path

import numpy as np
import pytest

from bobc.nvtools import nvdisasm, ptxas
from bobc.sim.faults import Unmodeled
from bobc.sim.kernel import buffer_addresses, run_kernel

FORMS = {"sm_90": "WARPSYNC.COLLECTIVE R7, join", "sm_86": "WARPSYNC.EXCLUSIVE R7"}


def _hand(target: str) -> str:
    return f""".kernel forms
    S2R R0, SR_TID.X
    ULDC.64 UR4, c[0x0][memory_descriptor]
    MOV R7, 0xffffffff
    MOV R4, R0
    ISETP.GE.U32.AND P0, PT, R0, 0x10, PT
    @P0 BRA high
    {FORMS[target]}
    SHFL.IDX PT, R4, R0, 0x10, 0x1f
join:
    BRA out
high:
    IADD3 R0, R0, 0x100, RZ
out:
    ULDC.64 UR6, c[0x0][param+0x0]
    LEA R10, P0, R0, UR6, 0x2
    IADD3.X R11, RZ, UR7, RZ, P0, !PT
    EXIT
"""


@pytest.mark.parametrize("target", ["sm_86", "sm_90"])
def test_hand_written_collective_warpsync_is_refused_by_name(target):
    buffers = {"out": np.zeros(32, np.uint32)}
    params = int(buffer_addresses(buffers)["out"]).to_bytes(8, "little")
    with pytest.raises(Unmodeled) as caught:
        run_kernel(_hand(target), target, grid=(1,), block=(32,), params=params, buffers=buffers)
    form = FORMS[target].split()[0]
    assert f"{form} is not modeled" in caught.value.message
    assert "write WARPSYNC with a mask" in caught.value.message
    assert caught.value.exit_code == 7 and caught.value.pc == 0x60


MATCH = """.version 8.0
.target sm_90
.address_size 64
.visible .entry match(.param .u64 out)
{
  .reg .b32 %r<4>; .reg .b64 %rd<4>;
  mov.u32 %r1, %tid.x; and.b32 %r2, %r1, 3;
  match.any.sync.b32 %r3, %r2, 0xffffffff;
  ld.param.u64 %rd1, [out]; cvta.to.global.u64 %rd1, %rd1;
  mul.wide.u32 %rd2, %r1, 4; add.s64 %rd3, %rd1, %rd2;
  st.global.u32 [%rd3], %r3;
  ret;
}
"""


def test_ptxas_O0_collective_region_is_refused_at_its_warpsync():
    """ptxas -O0 for sm_90 puts match.any.sync in a WARPSYNC.COLLECTIVE ... ENDCOLLECTIVE region inline
    (the fact checked first); the simulator refuses the region's WARPSYNC by name (before: it ran it as
    a no-op and stopped at ENDCOLLECTIVE, "does not model")."""
    tool = ptxas()
    with tempfile.TemporaryDirectory() as folder:
        source, cubin = Path(folder) / "k.ptx", Path(folder) / "k.cubin"
        source.write_text(MATCH)
        subprocess.run([tool, "-arch", "sm_90", "-O0", str(source), "-o", str(cubin)], check=True, capture_output=True)
        text = subprocess.run([nvdisasm(), "-c", str(cubin)], check=True, capture_output=True, text=True).stdout
        code = cubin.read_bytes()
    assert "WARPSYNC.COLLECTIVE" in text and "ENDCOLLECTIVE" in text and "BRA.DIV" not in text
    buffers = {"out": np.zeros(32, np.uint32)}
    with pytest.raises(Unmodeled, match=r"WARPSYNC\.COLLECTIVE R\d+, 0x[0-9a-f]+\): WARPSYNC\.COLLECTIVE is not modeled"):
        run_kernel(code, "sm_90", grid=(1,), block=(32,), params=["out"], buffers=buffers, kernel_name="match")


# --- a WARPSYNC whose mask leaves out a lane executing it (sm_86: WARPSYNC imm / R; sm_90's tables have
# only .ALL and .COLLECTIVE).  PTX ISA, bar.warp.sync: "the behavior of bar.warp.sync is undefined if the
# executing thread is not in the membermask" (NVIDIA's CUDA C++ guidelines, collective.warp.include_self,
# the same).  Before session 42 each form below was accepted.

OWN_MASK = {
    "converged": "    WARPSYNC 0xffff\n",
    "diverged": "    @P0 BRA high\n    WARPSYNC 0xffff\n    BRA out\nhigh:\n    WARPSYNC 0xffff\n",
    "register": "    MOV R7, 0xffff\n    WARPSYNC R7\n",
    # accepted: each path's own lanes, and the whole warp
    "own_paths": "    @P0 BRA high\n    WARPSYNC 0xffff\n    BRA out\nhigh:\n    WARPSYNC 0xffff0000\n",
    "full": "    WARPSYNC 0xffffffff\n",
}


def _own_mask(name: str) -> np.ndarray:
    text = f""".kernel own
    S2R R0, SR_TID.X
    ULDC.64 UR4, c[0x0][memory_descriptor]
    ISETP.GE.U32.AND P0, PT, R0, 0x10, PT
{OWN_MASK[name]}out:
    ULDC.64 UR6, c[0x0][param+0x0]
    LEA R10, P0, R0, UR6, 0x2
    IADD3.X R11, RZ, UR7, RZ, P0, !PT
    STG.E [R10.64], R0
    EXIT
"""
    buffers = {"out": np.zeros(32, np.uint32)}
    params = int(buffer_addresses(buffers)["out"]).to_bytes(8, "little")
    return run_kernel(text, "sm_86", grid=(1,), block=(32,), params=params, buffers=buffers)["out"]


@pytest.mark.parametrize("name", ["converged", "diverged", "register"])
def test_warpsync_mask_leaving_out_its_lane_is_refused(name):
    from bobc.sim.faults import SimulationFault
    with pytest.raises(SimulationFault) as caught:
        _own_mask(name)
    assert "lane 16 executes it, but its mask 0x0000ffff leaves that lane out" in caught.value.message
    assert caught.value.thread == 16 and caught.value.exit_code == 7


@pytest.mark.parametrize("name", ["own_paths", "full"])
def test_warpsync_masks_holding_their_lanes_are_accepted(name):
    assert (_own_mask(name) == np.arange(32)).all()
