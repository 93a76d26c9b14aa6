"""Every simulated path holds its launches to their kernels' contracts (probe s40 simcontracts).

docs/simulator.md: every access a launch makes must lie in what its kernel's contract declares
(a kernel writing through a pointer declared `read` is refused), and a TMA copy may name only the
maps its `//@ tensormap` words hold.  Before, only `bobc sim` gave the simulator the contracts:
bobc.sim.host_adapter.host_plan without its optional folders (bench/sim_bench.py, the tests) and
Coppelius's simulated device (examples/coppelius/coppelius_host/sim_device.py) built channels with
none, so those checks silently did not apply there.  Now the contracts come from one place,
bobc.sim.contracts, on every path, and a kernel whose contract cannot be read is refused by name.
"""
from __future__ import annotations

import shutil
import sys
from pathlib import Path

import pytest

from bobc import pipeline
from bobc.sim.channel import Channel
from bobc.sim.contracts import ContractsMissing, read_contracts
from bobc.sim.faults import OutOfBounds
from bobc.sim.host_adapter import host_plan
from bobc.sim.invocation import simulate
from bobc.sim.memory import Memory
from bobc.targets import SM86

REPO = Path(__file__).resolve().parents[2]
LINREG = REPO / "examples" / "linear_regression"
sys.path.insert(0, str(LINREG))
sys.path.insert(0, str(REPO / "examples" / "coppelius"))


def test_a_channel_is_not_made_without_saying_what_contracts_hold_its_launches():
    # leaving them out used to give a channel that checked no footprint and no tensor map
    with pytest.raises(TypeError, match="contracts"):
        Channel(Memory([], []))


def test_host_plan_needs_the_folders_its_kernels_contracts_are_read_from(all_steps):
    built, _ = all_steps
    with pytest.raises(TypeError, match="folders"):
        host_plan(built.plan, built.images, SM86)


def test_a_kernel_without_a_source_is_refused_by_name_not_run_unchecked(tmp_path):
    with pytest.raises(ContractsMissing) as caught:
        read_contracts(["bob-adamw", "no-such-kernel"], SM86, [tmp_path])
    assert caught.value.exit_code == 1
    assert "cannot hold these kernels to their contracts: no-such-kernel (no source of it in " in caught.value.message


def test_a_plans_simulation_through_the_api_holds_a_store_to_its_contract(tmp_path):
    """linreg-sgd's code stores W (`STG.E [R2.64], R8`); its contract edited to declare W `read`
    only: docs/kernel-contracts.md says what a pointer may not write the kernel must not, so the
    store is refused -- through host_plan and simulate, as through `bobc sim`."""
    import make_record

    shutil.copytree(LINREG / "LinReg", tmp_path / "LinReg")
    sgd = tmp_path / "LinReg" / "kernels" / "linreg-sgd.sass"
    text = sgd.read_text()
    assert "//@ param 0 pointer read-write 4*lo[2]" in text
    sgd.write_text(text.replace("//@ param 0 pointer read-write 4*lo[2]", "//@ param 0 pointer read 4*lo[2]"))
    built = pipeline.compile_plan(tmp_path / "LinReg" / "Build" / "NativeHost.bob", SM86)
    host = host_plan(built.plan, built.images, SM86, built.program.search_path)
    with pytest.raises(OutOfBounds) as caught:
        simulate(host, built.images, "train", make_record.record_bytes(*make_record.make(3)), None)
    assert "(linreg-sgd)" in caught.value.message
    assert "STG.E [R2.64], R8) writes bytes its kernel's contract does not say it writes" in caught.value.message


def test_coppelius_simulated_device_reads_every_kernels_contract():
    """The kernels Coppelius's simulated GPU recognises (each source for sm_90, its variant where one
    exists) each come with their contract; the sm_90 GEMMs' declared maps are the words 17 and 18
    their sources' `//@ tensormap` lines name."""
    from coppelius_host.device import REALIZATION, kernel_codes
    from coppelius_host.sim_device import kernel_contracts

    held = kernel_contracts("SM90")
    assert set(held.contracts) == set(kernel_codes("SM90").values())
    source = (REALIZATION / "coppelius-gemm-nt.sm_90.sass").read_text()
    words = sorted(int(line.split()[2]) for line in source.splitlines() if line.startswith("//@ tensormap"))
    assert words == [17, 18]
    assert sorted(m.word for m in held.contracts["coppelius-gemm-nt"].tensor_maps) == words
