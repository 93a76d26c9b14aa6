"""Lanes of one warp across instructions (bobc.sim.lanes.Divergence; docs/simulator.md, "Races within
a warp"): a lane's shared store read by another lane of its warp that went the other way at a
branch, with nothing between that makes the two wait for each other, is refused (LanesRace, exit 7).

Expected verdicts from the PTX ISA's memory consistency model: lanes are threads, and two conflicting
accesses with no causality order between them are a data race; bar.warp.sync "also guarantee[s]
memory ordering among threads participating in barrier".  The racing ptxas kernel (`race`) has its
store on one branch and its load on the other with no bar.warp.sync: a race.  The ordered ones
(`full`, `divsync`, `loopdiv`) have a bar.warp.sync between store and load; ptxas compiles each to a
NOP in code that a BSSY / BSYNC pair or straight-line code keeps converged (checked below), so the
simulator accepts them and their values are NumPy's.  Before session 41's lanerace2 every case here
was accepted: the simulator ran the lower program counter's path first and gave that order's answer."""
from __future__ import annotations

import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
from ptx_kernels import kernel  # noqa: E402

from bobc.nvtools import nvdisasm  # noqa: E402
from bobc.sim.faults import LanesRace  # noqa: E402
from bobc.sim.kernel import buffer_addresses, run_kernel  # noqa: E402

from .conftest import shared_base  # noqa: E402

TARGETS = ("sm_86", "sm_90")

HEAD = """    S2R R0, SR_TID.X
    SHF.L.U32 R3, R0, 0x2, RZ
    ULDC.64 UR4, c[0x0][memory_descriptor]
    MOV R4, RZ
    MOV R2, 0x5
    ISETP.GE.U32.AND P0, PT, R0, 0x10, PT
"""
TAIL = """    ULDC.64 UR6, c[0x0][param+0x0]
    LEA R10, P0, R0, UR6, 0x2
    IADD3.X R11, RZ, UR7, RZ, P0, !PT
    STG.E [R10.64], R4
    EXIT
"""
# lanes 0-15 store 5 to shared word `lane`; lanes 16-31 load word `lane - 16`
STORE_LOW, LOAD_HIGH = "    STS [R3], R2\n", "    LDS R4, [R3+-0x40]\n"
SASS = {
    # different paths, nothing between: a race (either path may run first on sm_70+)
    "twopaths": "    @P0 BRA high\n" + STORE_LOW + "    BRA join\nhigh:\n" + LOAD_HIGH + "join:\n",
    # both paths WARPSYNC the whole warp (every lane a WARPSYNC names must reach one: the store's lanes
    # wait at theirs until the load's lanes reach theirs) before the load: ordered
    # (WARPSYNC 0xffffffff on sm_86, WARPSYNC.ALL on sm_90: the assembler's forms for each; with the
    # load's path alone lacking it, tests/sim/test_bsync_waits_s41.py: a race)
    "warpsync": "    @P0 BRA high\n" + STORE_LOW + "    {warpsync}\n    BRA join\nhigh:\n    {warpsync}\n" + LOAD_HIGH +
                "join:\n",
    # reconverged by BSYNC (the lanes BSSY recorded), then a predicated load: ordered
    "bsync": "    BSSY B0, join\n    @P0 BRA high\n" + STORE_LOW + "    BRA join\nhigh:\n    MOV R4, RZ\njoin:\n"
             "    BSYNC B0\n    @P0 LDS R4, [R3+-0x40]\n",
    # one converged instruction stream, predicated: program order
    "predicated": "    @!P0 STS [R3], R2\n    @P0 LDS R4, [R3+-0x40]\n",
}


def _run_sass(name: str, target: str) -> np.ndarray:
    buffers = {"out": np.zeros(32, np.uint32)}
    at = buffer_addresses(buffers)
    body = SASS[name].replace("{warpsync}", "WARPSYNC 0xffffffff" if target == "sm_86" else "WARPSYNC.ALL")
    base = shared_base(target)          # past sm_90's system KiB (docs/targets.md); 0 on sm_86
    if base:
        body = body.replace("[R3]", f"[R3+{base:#x}]").replace("[R3+-0x40]", f"[R3+{base - 0x40:#x}]")
    text = f".kernel {name}\n.shared {256 + base}\n" + HEAD + body + TAIL
    return run_kernel(text, target, grid=(1,), block=(32,), params=int(at["out"]).to_bytes(8, "little"),
                      buffers=buffers)["out"]


@pytest.mark.parametrize("target", TARGETS)
def test_diverged_store_then_load_is_refused(target):
    with pytest.raises(LanesRace) as caught:
        _run_sass("twopaths", target)
    message = caught.value.message
    base = shared_base(target)
    store = f"STS [R3+{base:#x}], R2" if base else "STS [R3], R2"
    assert f"lanes of one warp race on shared byte {base:#x}" in message
    assert f"(warp 0, lane 0) stores to it at 0x0070 ({store})" in message
    assert "(warp 0, lane 16) loads it at 0x0090" in message
    assert "the branch at 0x0060 (@P0 BRA 0x90)" in message
    assert caught.value.exit_code == 7 and caught.value.pc == 0x90


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("name", ["warpsync", "bsync", "predicated"])
def test_ordered_exchanges_are_accepted(name, target):
    out = _run_sass(name, target)
    assert (out[16:] == 5).all() and (out[:16] == 0).all()


def _inputs():
    return {"out": np.zeros(32, np.uint32), "in": (np.arange(32 * 6, dtype=np.uint32) % 7)}


def _loop_value(n: int) -> int:
    value = 0
    for i in range(n):
        value = (value * 1664525 + i) & 0xFFFFFFFF
    return value


@pytest.mark.parametrize("target", TARGETS)
def test_ptxas_race_is_refused(target):
    """PTX `race`: lanes 16-31 store after a data-dependent loop, lanes 0-15 load on the other branch;
    ptxas keeps the branch (BSSY / BSYNC only inside each side), so the paths run in either order."""
    buffers = _inputs()
    with pytest.raises(LanesRace, match=r"lanes of one warp race on shared byte 0x"):
        # the control codes are ptxas's; the hazard checker is not what is tested here
        run_kernel(kernel("lanes_diverged", target), target, grid=(1,), block=(32,), params=["out", "in"],
                   buffers=buffers, kernel_name="race", check_hazards=False)


@pytest.mark.parametrize("target", TARGETS)
def test_ptxas_warp_sync_exchanges_are_accepted(target):
    cubin = kernel("lanes_diverged", target)
    lanes = np.arange(32)
    full = run_kernel(cubin, target, grid=(1,), block=(32,), params=["out"], buffers={"out": np.zeros(32, np.uint32)},
                      kernel_name="full")["out"]
    assert (full == lanes ^ 1).all()
    stored = np.where(lanes % 2 == 1, 3 * lanes, 5 * lanes + 7)
    divsync = run_kernel(cubin, target, grid=(1,), block=(32,), params=["out"],
                         buffers={"out": np.zeros(32, np.uint32)}, kernel_name="divsync")["out"]
    assert (divsync == stored[lanes ^ 1]).all()
    buffers = _inputs()
    loop = run_kernel(cubin, target, grid=(1,), block=(32,), params=["out", "in"], buffers=buffers,
                      kernel_name="loopdiv")["out"]
    counts = buffers["in"][:32]
    assert [int(x) for x in loop] == [_loop_value(int(counts[i ^ 1])) for i in range(32)]


@pytest.mark.parametrize("target", TARGETS)
def test_ptxas_compiles_converged_warp_sync_to_nop(target):
    """The fact docs/simulator.md rests on: a bar.warp.sync in converged code leaves no WARPSYNC, only a
    NOP, so SASS cannot tell a kernel that has one from a kernel that lacks it."""
    tool = nvdisasm()
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "k.cubin"
        path.write_bytes(kernel("lanes_diverged", target))
        text = subprocess.run([tool, "-c", str(path)], check=True, capture_output=True, text=True).stdout
    full = text[text.index(".text.full:"):]
    full = full[:full.index("EXIT")]
    assert "WARPSYNC" not in full and "NOP" in full
    loop = text[text.index(".text.loopdiv:"):]
    loop = loop[:loop.index("EXIT")]
    assert "BSYNC" in loop and "WARPSYNC" not in loop
