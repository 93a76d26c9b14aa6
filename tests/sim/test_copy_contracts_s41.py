"""A kernel that declares a copy (`//@ copy FROM to TO BYTES`) must do exactly that copy (probe s41
copycontract).

docs/kernel-contracts.md, "Copies": every launch of the kernel copies BYTES bytes from the address in
pointer word FROM to the one in word TO, byte i to byte i.  The simulator holds each launch to it
(bobc.sim.contracts.begin_copies / end_copies): before the launch the destination is filled with its
source's bytes inverted, after it every destination byte must equal its source byte as it was.  The
expected values are independent of the implementation: a copy's result is its source (NumPy), and
linreg-sgd computes W - lr * G, which is not G.
"""
from __future__ import annotations

import shutil
import sys
from pathlib import Path

import numpy as np
import pytest

from bobc import pipeline
from bobc.certify.kernels import parse_contract
from bobc.sim import kernel as sim_kernel
from bobc.sim.contracts import LaunchContracts, begin_copies, end_copies
from bobc.sim.faults import SimulationFault
from bobc.sim.kernel import buffer_addresses, run_kernel
from bobc.sim.memory import Memory
from bobc.targets import SM86

REPO = Path(__file__).resolve().parents[2]
COPY = REPO / "examples" / "coppelius" / "Realization" / "Nvidia" / "SM86" / "coppelius-copy.sass"
LINREG = REPO / "examples" / "linear_regression"
QMD = 0x40000


def _copy_launch(monkeypatch, words: int, grid: int):
    """coppelius-copy run on `words` u32 words (block 256, 4 words a thread), its declared copy
    held as a plan's launch is (the channel's begin_copies / end_copies around the launch)."""
    contract = parse_contract(COPY, "coppelius-copy")
    source = np.arange(1, words + 1, dtype=np.uint32) * np.uint32(2654435761)
    buffers = {"src": source.copy(), "dst": np.zeros(words, np.uint32)}
    at = buffer_addresses(buffers)
    bank0 = bytes(SM86.parameter_base) + np.array([at["src"], at["dst"], words], np.uint64).tobytes()
    held = LaunchContracts({"coppelius-copy": contract}, {QMD: "coppelius-copy"}, SM86)
    copies = held.copies("launch 0", QMD, bank0)
    made = {}

    def memory(*args):
        made["memory"] = m = Memory(*args)
        made["pending"] = begin_copies(m, copies, "launch 0")
        return m
    monkeypatch.setattr(sim_kernel, "Memory", memory)
    out = run_kernel(COPY, "sm_86", (grid, 1, 1), (256, 1, 1), ["src", "dst", np.uint32(words)], buffers)
    end_copies(made["memory"], made["pending"], "launch 0")
    return out, source


def test_coppelius_copy_declares_the_copy_it_does(monkeypatch):
    contract = parse_contract(COPY, "coppelius-copy")
    assert [(c.source, c.destination, c.size) for c in contract.copies] == [(0, 1, "4*lo[2]")]
    out, source = _copy_launch(monkeypatch, 2048, 2)          # grid ceil(2048 / 1024)
    assert np.array_equal(out["dst"], source)


def test_a_launch_that_leaves_part_of_its_declared_copy_undone_is_refused(monkeypatch):
    # one block of 1024 words where the copy declares 2048: words 1024.. are never written
    with pytest.raises(SimulationFault) as refused:
        _copy_launch(monkeypatch, 2048, 1)
    message = refused.value.message
    assert "declares a copy (examples/coppelius/Realization/Nvidia/SM86/coppelius-copy.sass:" in message
    assert "of 8,192 bytes" in message
    assert "byte 4,096 of the destination" in message          # word 1024, the first one block 0 leaves
    assert "4,096 of the 8,192 bytes differ; 4,096 of them the launch left unwritten" in message
    assert "the kernel does not do the copy it declares" in message


def test_overlapping_copy_ranges_are_refused():
    memory = Memory([], [])
    copies = [("k.sass:3: //@ copy 0 to 1 64", 0x1000, 0x1020, 64)]
    with pytest.raises(SimulationFault, match=r"64 bytes to 0x1020, which overlap the 64 bytes it copies from 0x1000"):
        begin_copies(memory, copies, "launch 0")


def test_a_plans_kernel_declaring_a_copy_it_does_not_do_is_refused_by_the_simulator(tmp_path):
    """linreg-sgd computes W = W - lr * G; its contract edited to say it copies G into W (W declared
    `write`, as a copy's destination is) -- through host_plan and simulate, as through `bobc sim`."""
    sys.path.insert(0, str(LINREG))
    import make_record
    from bobc.sim.host_adapter import host_plan
    from bobc.sim.invocation import simulate

    shutil.copytree(LINREG / "LinReg", tmp_path / "LinReg")
    sgd = tmp_path / "LinReg" / "kernels" / "linreg-sgd.sass"
    text = sgd.read_text()
    assert "//@ param 0 pointer read-write 4*lo[2]" in text
    sgd.write_text(text.replace("//@ param 0 pointer read-write 4*lo[2]",
                                "//@ param 0 pointer write 4*lo[2]\n//@ copy 1 to 0 4*lo[2] G into W"))
    built = pipeline.compile_plan(tmp_path / "LinReg" / "Build" / "NativeHost.bob", SM86)
    host = host_plan(built.plan, built.images, SM86, built.program.search_path)
    with pytest.raises(SimulationFault) as caught:
        simulate(host, built.images, "train", make_record.record_bytes(*make_record.make(3)), None)
    message = caught.value.message
    assert "(linreg-sgd)" in message or "linreg-sgd" in message
    assert "//@ copy 1 to 0 4*lo[2]" in message
    assert "the kernel does not do the copy it declares" in message


# -- mutants6: what the tests above left open (each a mutant of bobc.sim.contracts that passed them)

from dataclasses import replace                                     # noqa: E402

from bobc.certify.kernels import ParameterCopy                     # noqa: E402
from bobc.sim.faults import Unmodeled                              # noqa: E402
from bobc.sim.memory import Buffer                                 # noqa: E402


@pytest.mark.parametrize("source, destination", [(0x1000, 0x1040), (0x1040, 0x1000)])
def test_ranges_that_only_touch_are_not_overlapping(source, destination):
    """[0x1000, 0x1040) and [0x1040, 0x1080) share no byte (half-open ranges): a copy between them,
    either way round, is held, not refused; its destination filled with the source bytes inverted."""
    data = np.arange(0x100, dtype=np.uint8)
    memory = Memory([Buffer("b", 0x1000, data)], [])
    pending = begin_copies(memory, [("k.sass:3: //@ copy 0 to 1 64", source, destination, 64)], "launch 0")
    expected = np.arange(source - 0x1000, source - 0x1000 + 64, dtype=np.uint8)
    assert memory.read(destination, 64) == (expected ^ 0xFF).tobytes()
    memory.write(destination, expected.tobytes())
    end_copies(memory, pending, "launch 0")


def _words_bank0(*words):
    return bytes(SM86.parameter_base) + np.array(words, np.uint64).tobytes()


def test_a_launch_copying_zero_bytes_has_no_copy_to_hold():
    """N = 0: 4*lo[2] is 0 bytes, so nothing is copied and nothing read -- even from addresses that
    lie in no buffer (a copy of no bytes touches none)."""
    held = LaunchContracts({"coppelius-copy": parse_contract(COPY, "coppelius-copy")}, {QMD: "coppelius-copy"}, SM86)
    assert held.copies("launch 0", QMD, _words_bank0(0x10, 0x20, 0)) == []
    what, source, destination, size = held.copies("launch 0", QMD, _words_bank0(0x10, 0x20, 5 | (9 << 32)))[0]
    assert (source, destination, size) == (0x10, 0x20, 20)          # 4 * lo[2], the high half ignored


def test_a_copy_size_that_divides_by_zero_on_the_launch_is_unmodeled_not_run():
    contract = replace(parse_contract(COPY, "coppelius-copy"), copies=(ParameterCopy(0, 1, "4*lo[2]/lo[2]", line=10),))
    held = LaunchContracts({"coppelius-copy": contract}, {QMD: "coppelius-copy"}, SM86)
    with pytest.raises(Unmodeled, match=r"launch 0: its kernel's contract declares a copy \(.*//@ copy 0 to 1 "
                                        r"4\*lo\[2\]/lo\[2\]\) whose size cannot be evaluated"):
        held.copies("launch 0", QMD, _words_bank0(0x10, 0x20, 0))


def test_a_destination_overlapping_another_copys_source_is_refused():
    """docs/kernel-contracts.md: "a copy whose destination overlaps a source of the launch" -- any
    copy's, not only its own: copy 1 writes [0x2000, 0x2040), copy 2 reads [0x2020, 0x2060)."""
    memory = Memory([Buffer("b", 0x1000, np.zeros(0x2000, np.uint8))], [])
    copies = [("k.sass:3: //@ copy 0 to 1 64", 0x1000, 0x2000, 64), ("k.sass:4: //@ copy 2 to 3 64", 0x2020, 0x2800, 64)]
    with pytest.raises(SimulationFault, match=r"64 bytes to 0x2000, which overlap the 64 bytes it copies from 0x2020"):
        begin_copies(memory, copies, "launch 0")
