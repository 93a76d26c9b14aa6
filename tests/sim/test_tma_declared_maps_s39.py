"""A TMA copy must name a tensor map its launch's kernel contract declares (probe s39 tmacontract).

A kernel names each tensor it copies by a `//@ tensormap W of P ...` line (docs/kernel-contracts.md,
"Tensor maps"): bobc writes the map and fills word W with its address, and the certifier holds the
map's extent from P's address to P's resident.  A copy through any other 128 bytes -- a pointer
word's tensor, an address the code computes -- reads whatever tensor those bytes describe, which
nothing checked; the simulator decoded them and copied.  Now a launch (its kernel's contract
evaluated on its bank 0, as the GPU reads it: bobc.sim.contracts) may copy only through the maps its
words hold.

The kernel is tests/sim/test_tma_swizzle_rows_s39.py's: one UTMALDG.2D through the map at word 0.
"""
from __future__ import annotations

import struct
import sys
from pathlib import Path

import numpy as np
import pytest

from bobc.nvidia.tensor_map import TiledTensor, encode_tiled
from bobc.sim import kernel as sim_kernel
from bobc.sim.faults import SimulationFault
from bobc.sim.contracts import LaunchContracts
from bobc.sim.kernel import buffer_addresses, run_kernel
from bobc.sim.memory import Memory
from bobc.targets import SM90

from .test_tma_swizzle_rows_s39 import KERNEL

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "tests/images"))
import synthetic_bob as bob  # noqa: E402


def _copy(monkeypatch, declared):
    """Run the copy with the launch's declared map addresses `declared(at)` (None: not known)."""
    host = np.arange(64 * 256, dtype=np.float16).reshape(64, 256)
    buffers = {"tensor": host.reshape(-1).view(np.uint8).copy(), "map": np.zeros(128, np.uint8),
               "other": np.zeros(128, np.uint8), "out": np.zeros(1024, np.uint8)}
    at = buffer_addresses(buffers)
    for name in ("map", "other"):
        buffers[name][:] = np.frombuffer(encode_tiled(TiledTensor("float16", at["tensor"], (256, 64), (512,),
                                                                  (64, 8))), np.uint8)

    def memory(*args):
        m = Memory(*args)
        m.tensor_maps = declared(at)
        return m
    monkeypatch.setattr(sim_kernel, "Memory", memory)
    params = ["map", "out", np.int32(0), np.int32(0), np.uint32(1024), np.uint32(1024)]
    return run_kernel(KERNEL, "sm_90", (1, 1, 1), (32, 1, 1), params, buffers, shared_bytes=66560,
                      check_hazards=False)["out"], host, at


def test_a_copy_through_a_declared_map_runs(monkeypatch):
    out, host, _ = _copy(monkeypatch, lambda at: frozenset({at["map"]}))
    assert np.array_equal(out.view(np.float16).reshape(8, 64), host[:8, :64])


def test_a_copy_through_a_map_the_contract_does_not_declare_is_refused(monkeypatch):
    # the same 128 bytes at another address: a well-formed map, but not the launch's
    with pytest.raises(SimulationFault) as refused:
        _copy(monkeypatch, lambda at: frozenset({at["other"]}))
    message = str(refused.value)
    assert "UTMALDG.2D [UR8], [UR24]" in message
    assert "which is not one the launch's kernel contract declares" in message
    assert "//@ tensormap" in message


def test_a_launch_whose_contract_declares_no_map_may_copy_through_none(monkeypatch):
    with pytest.raises(SimulationFault, match=r"the maps its //@ tensormap words hold: none"):
        _copy(monkeypatch, lambda at: frozenset())


def test_a_plans_launches_may_copy_through_the_maps_their_words_hold(tmp_path):
    # Bob's kernels with adamw given a map at word 9 (it declares words 0..8) and the ULDC.64 that
    # reads it, as tests/certify/test_tensor_maps.py does
    from bobc.certify.kernels import parse_contract
    from bobc.nvidia.encode import encode_images

    for source in (REPO / "specs/Realization/Nvidia/SM86").glob("bob-*.sass"):
        (tmp_path / source.name).write_text(source.read_text())
    adamw = tmp_path / "bob-adamw.sass"
    marker = "    ULDC.64 UR4, c[0x0][memory_descriptor]\n"
    adamw.write_text(adamw.read_text().replace(
        "\n.kernel ", "\n//@ tensormap 9 of 1 binary32 dims (256, hi[7]/256) strides (1024) box (32, 8) swizzle "
        "128b G\n.kernel ", 1).replace(marker, marker + "    ULDC.64 UR6, c[0x0][param+0x48]\n", 1))
    contracts = {path.stem: parse_contract(path, path.stem) for path in tmp_path.glob("*.sass")}
    images = encode_images(bob.bob_whole_program_plan(), SM90, contracts=contracts)
    launches = images.manifest["launches"]
    # what the channel holds each launch to (bobc.sim.contracts), on the bank 0 its QMD names
    held = LaunchContracts(contracts, {launch["qmd_address"]: launch["identity"] for launch in launches}, SM90)
    allowed = {launch["qmd_address"]: held.held_to(f"launch {launch['index']}", launch["qmd_address"], images.program[
        launch["parameter_offset"]:launch["parameter_offset"] + SM90.parameter_block_bytes])[1] for launch in launches}
    (mapped,) = images.manifest["tensor_maps"]
    users = {user["launch"] for user in mapped["users"]}
    assert users and users == {launch["index"] for launch in launches if launch["identity"] == "bob-adamw"}
    for launch in launches:
        block = launch["parameter_offset"] + SM90.parameter_base     # argument 0 of the launch's bank 0
        word = struct.unpack_from("<Q", images.program, block + 8 * 9)[0]
        if launch["index"] in users:
            assert allowed[launch["qmd_address"]] == {word} and word == bob.PROGRAM_BASE + mapped["offset"]
        else:
            assert allowed[launch["qmd_address"]] == frozenset()
