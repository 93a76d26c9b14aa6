"""Lanes of one warp across instructions, the forms session 41 left unjudged (bobc.sim.lanes.Divergence;
docs/simulator.md, "Races within a warp"): a shared load on one path of bytes a lane of another path
later stores (load then store), two paths storing different values to the same bytes, and the same
three forms (with store then load) on global memory.

Expected verdicts from the PTX ISA's memory consistency model: lanes are threads; two accesses to one
location, at least one a write, with no causality order between them are a data race, and a read of
a raced location may see either write.  After a branch sends lanes different ways, sm_70 and later
(independent thread scheduling) run the two paths in either order until something makes them wait
for each other (a BSYNC, a WARPSYNC naming both) -- so the refused kernels' values would depend on
the order (before this check the simulator ran the lower program counter's path first and gave that
order's answer every run: `war` gave the old value, `waw` the value of the path laid out last).  The
accepted kernels are ordered (a WARPSYNC on both paths between the accesses, or one converged
predicated stream) or store one value from every path; their values are worked out by hand below."""
from __future__ import annotations

import numpy as np
import pytest

from bobc.sim.faults import LanesRace
from bobc.sim.kernel import buffer_addresses, run_kernel

from .conftest import shared_base

TARGETS = ("sm_86", "sm_90")

# every lane first stores 3 to shared word `lane` (converged: no branch yet); lanes 0-15 then take
# the fall-through path, lanes 16-31 the branch; R2 = 5, R5 = 7
HEAD = """    S2R R0, SR_TID.X
    SHF.L.U32 R3, R0, 0x2, RZ
    ULDC.64 UR4, c[0x0][memory_descriptor]
    MOV R4, RZ
    MOV R2, 0x5
    MOV R5, 0x7
    MOV R6, 0x3
    STS [R3], R6
    ISETP.GE.U32.AND P0, PT, R0, 0x10, PT
    ISETP.EQ.U32.AND P1, PT, R0, 0x10, PT
"""
TAIL = """    ULDC.64 UR6, c[0x0][param+0x0]
    LEA R10, P0, R0, UR6, 0x2
    IADD3.X R11, RZ, UR7, RZ, P0, !PT
    STG.E [R10.64], R4
    EXIT
"""
READ_ALL = "    LOP3.LUT R7, R3, 0x3f, RZ, 0xc0, !PT\n    LDS R4, [R7]\n"    # every lane: word lane % 16
SASS = {
    # lanes 0-15 load word `lane`, lanes 16-31 (the other path) store 5 to word `lane - 16`
    "war": "    @P0 BRA high\n    LDS R4, [R3]\n    BRA join\nhigh:\n    STS [R3+-0x40], R2\njoin:\n",
    # the same inside a BSSY / BSYNC pair: the BSYNC comes after both accesses, too late
    "war_bssy": "    BSSY B0, join\n    @P0 BRA high\n    LDS R4, [R3]\n    BRA join\nhigh:\n    STS [R3+-0x40], R2\n"
                "join:\n    BSYNC B0\n",
    # both paths load word 0 (lanes 0-15 first, as laid out), then lane 16 stores to it: its store races
    # with lanes 0-15's load (the load record keeps every lane of the warp that loaded the byte)
    "war_merged": "    @P0 BRA high\n    LDS R4, [RZ]\n    BRA join\nhigh:\n    LDS R4, [RZ]\n    @P1 STS [RZ], R2\njoin:\n",
    # lanes 0-15 store 5 to word `lane`, lanes 16-31 store 7 to word `lane - 16`; reconverged, all read
    "waw": "    BSSY B0, join\n    @P0 BRA high\n    STS [R3], R2\n    BRA join\nhigh:\n    STS [R3+-0x40], R5\njoin:\n"
           "    BSYNC B0\n" + READ_ALL,
    # ordered: both paths WARPSYNC the whole warp between the load and the store
    "war_warpsync": "    @P0 BRA high\n    LDS R4, [R3]\n    {warpsync}\n    BRA join\nhigh:\n    {warpsync}\n"
                    "    STS [R3+-0x40], R2\njoin:\n",
    # one converged predicated stream: program order (load, then store)
    "war_predicated": "    @!P0 LDS R4, [R3]\n    @P0 STS [R3+-0x40], R2\n",
    # both paths store the same value: whichever lands, the word holds 5
    "waw_same": "    BSSY B0, join\n    @P0 BRA high\n    STS [R3], R2\n    BRA join\nhigh:\n    STS [R3+-0x40], R2\njoin:\n"
                "    BSYNC B0\n" + READ_ALL,
    # ordered stores: WARPSYNC on both paths between them, so 7 lands last
    "waw_warpsync": "    BSSY B0, join\n    @P0 BRA high\n    STS [R3], R2\n    {warpsync}\n    BRA join\nhigh:\n"
                    "    {warpsync}\n    STS [R3+-0x40], R5\njoin:\n    BSYNC B0\n" + READ_ALL,
}


def _run(name: str, target: str) -> np.ndarray:
    buffers = {"out": np.zeros(32, np.uint32)}
    at = buffer_addresses(buffers)
    body = SASS[name].replace("{warpsync}", "WARPSYNC 0xffffffff" if target == "sm_86" else "WARPSYNC.ALL")
    head = HEAD
    base = shared_base(target)          # past sm_90's system KiB (docs/targets.md); 0 on sm_86
    if base:
        body = body.replace("[R3]", f"[R3+{base:#x}]").replace("[R3+-0x40]", f"[R3+{base - 0x40:#x}]") \
            .replace("[R7]", f"[R7+{base:#x}]").replace("[RZ]", f"[RZ+{base:#x}]")
        head = head.replace("[R3]", f"[R3+{base:#x}]")
    text = f".kernel {name}\n.shared {256 + base}\n" + head + body + TAIL
    return run_kernel(text, target, grid=(1,), block=(32,), params=int(at["out"]).to_bytes(8, "little"),
                      buffers=buffers)["out"]


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("name", ["war", "war_bssy"])
def test_load_then_other_paths_store_is_refused(name, target):
    with pytest.raises(LanesRace) as caught:
        _run(name, target)
    message, base = caught.value.message, shared_base(target)
    load = f"LDS R4, [R3+{base:#x}]" if base else "LDS R4, [R3]"
    store = f"STS [R3+{base - 0x40:#x}], R2" if base else "STS [R3+-0x40], R2"
    assert f"lanes of one warp race on shared byte {base:#x}" in message
    assert "(warp 0, lane 0) loads it at " in message and f"({load}), then thread (16, 0, 0)" in message
    assert "(warp 0, lane 16) stores to it at " in message and f"({store})" in message
    assert "went different ways at the branch at" in message
    assert "the store may run before the load" in message
    assert "reconverge the lanes between the two accesses" in caught.value.hint
    assert caught.value.exit_code == 7 and caught.value.thread == 16


@pytest.mark.parametrize("target", TARGETS)
def test_store_after_both_paths_loaded_is_refused(target):
    with pytest.raises(LanesRace) as caught:
        _run("war_merged", target)
    message = caught.value.message
    assert "(warp 0, lane 0) loads it at " in message
    assert "or a later load of it on that lane's path" in message     # lanes 0-15 and 16-31 loaded at two pcs
    assert "(warp 0, lane 16) stores to it at " in message


@pytest.mark.parametrize("target", TARGETS)
def test_two_paths_storing_different_values_are_refused(target):
    with pytest.raises(LanesRace) as caught:
        _run("waw", target)
    message = caught.value.message
    assert "(warp 0, lane 0) stores 0x05 to it at " in message
    assert "(warp 0, lane 16) stores 0x07 to it at " in message
    assert "either store may land last" in message


@pytest.mark.parametrize("target", TARGETS)
def test_ordered_or_same_value_forms_are_accepted(target):
    lanes = np.arange(32)
    # loads before the store in every order the GPU may take: lanes 0-15 read the 3 every lane stored first
    for name in ("war_warpsync", "war_predicated"):
        out = _run(name, target)
        assert (out[:16] == 3).all() and (out[16:] == 0).all(), name
    # 5 from both paths: word lane % 16 holds 5 whichever store lands last
    assert (_run("waw_same", target) == 5).all()
    # the WARPSYNC orders lanes 0-15's 5 before lanes 16-31's 7: 7 lands last
    assert (_run("waw_warpsync", target) == np.where(lanes >= 0, 7, 0)).all()


# global memory: lanes 0-15 access in[lane], lanes 16-31 (the other path) in[lane - 16]
GLOBAL_HEAD = """    ULDC.64 UR8, c[0x0][param+0x8]
    LEA R12, P2, R0, UR8, 0x2
    IADD3.X R13, RZ, UR9, RZ, P2, !PT
"""
GLOBAL = {
    "graw": "    @P0 BRA high\n    STG.E [R12.64], R2\n    BRA join\nhigh:\n    LDG.E R4, [R12.64+-0x40]\njoin:\n",
    "gwar": "    @P0 BRA high\n    LDG.E R4, [R12.64]\n    BRA join\nhigh:\n    STG.E [R12.64+-0x40], R2\njoin:\n",
    "gwaw": "    @P0 BRA high\n    STG.E [R12.64], R2\n    BRA join\nhigh:\n    STG.E [R12.64+-0x40], R5\njoin:\n",
    # a byte of the word: STG.U8 on one path, the whole word on the other (granule overlap, not equality)
    "gwaw_byte": "    @P0 BRA high\n    STG.E [R12.64], R2\n    BRA join\nhigh:\n    STG.E.U8 [R12.64+-0x3d], R5\njoin:\n",
    "gwaw_same": "    @P0 BRA high\n    STG.E [R12.64], R2\n    BRA join\nhigh:\n    STG.E [R12.64+-0x40], R2\njoin:\n",
    "graw_warpsync": "    @P0 BRA high\n    STG.E [R12.64], R2\n    {warpsync}\n    BRA join\nhigh:\n    {warpsync}\n"
                     "    LDG.E R4, [R12.64+-0x40]\njoin:\n",
    # different words on the two paths: no race
    "gdistinct": "    @P0 BRA high\n    STG.E [R12.64], R2\n    BRA join\nhigh:\n    LDG.E R4, [R12.64]\njoin:\n",
}


def _run_global(name: str, target: str, threads: int = 32):
    """threads 64: warp 0 all on the fall-through path (no lane parted), warp 1 split at lane 16 as
    warp 0 is with 32."""
    buffers = {"out": np.zeros(threads, np.uint32), "in": np.full(threads, 9, np.uint32)}
    at = buffer_addresses(buffers)
    body = GLOBAL[name].replace("{warpsync}", "WARPSYNC 0xffffffff" if target == "sm_86" else "WARPSYNC.ALL")
    head = HEAD.replace("    STS [R3], R6\n", "").replace("R0, 0x10, PT", f"R0, {threads - 16:#x}, PT")
    text = f".kernel {name}\n" + head + GLOBAL_HEAD + body + TAIL
    params = int(at["out"]).to_bytes(8, "little") + int(at["in"]).to_bytes(8, "little")
    result = run_kernel(text, target, grid=(1,), block=(threads,), params=params, buffers=buffers)
    return result["out"], result["in"], int(at["in"])


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("name, first, second", [("graw", "stores to it", "loads it"),
                                                 ("gwar", "loads it", "stores to it"),
                                                 ("gwaw", "stores 0x05 to it", "stores 0x07 to it"),
                                                 ("gwaw_byte", "stores 0x00 to it", "stores 0x07 to it")])
def test_global_accesses_of_parted_lanes_are_refused(name, first, second, target):
    buffers = {"out": np.zeros(32, np.uint32), "in": np.zeros(32, np.uint32)}
    address = int(buffer_addresses(buffers)["in"]) + (3 if name == "gwaw_byte" else 0)
    with pytest.raises(LanesRace) as caught:
        _run_global(name, target)
    message = caught.value.message
    assert f"lanes of one warp race on global byte {address:#x}" in message
    assert f"(warp 0, lane 0) {first} at " in message and f"(warp 0, lane 16) {second} at " in message
    assert "went different ways at the branch at" in message
    assert caught.value.exit_code == 7 and caught.value.thread == 16


@pytest.mark.parametrize("target", TARGETS)
def test_ordered_or_distinct_global_accesses_are_accepted(target):
    lanes = np.arange(32)
    out, memory, _ = _run_global("gwaw_same", target)
    assert (memory[:16] == 5).all() and (memory[16:] == 9).all()
    # the WARPSYNC orders the stores of lanes 0-15 before the loads of lanes 16-31: they read 5
    out, memory, _ = _run_global("graw_warpsync", target)
    assert (out == np.where(lanes >= 16, 5, 0)).all()
    # lanes 16-31 load their own in[lane] (9), never stored
    out, memory, _ = _run_global("gdistinct", target)
    assert (out == np.where(lanes >= 16, 9, 0)).all() and (memory[:16] == 5).all()


@pytest.mark.parametrize("target", TARGETS)
def test_only_the_parted_warp_is_judged(target):
    """Warp 0 stores on one path only (nothing parted it), warp 1 as the one-warp kernel: warp 1's
    lanes 32 and 48 are named, and warp 0's stores (recorded by no one) are no part of it."""
    buffers = {"out": np.zeros(64, np.uint32), "in": np.zeros(64, np.uint32)}
    address = int(buffer_addresses(buffers)["in"]) + 4 * 32
    with pytest.raises(LanesRace) as caught:
        _run_global("gwaw", target, threads=64)
    message = caught.value.message
    assert f"race on global byte {address:#x}" in message
    assert "(warp 1, lane 0) stores 0x05 to it" in message and "(warp 1, lane 16) stores 0x07 to it" in message
