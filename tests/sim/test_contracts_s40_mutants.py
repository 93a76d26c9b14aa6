"""bobc.sim.contracts held to exact values (probe s40 mutants5).

Each test kills a mutant of compiler/bobc/sim/contracts.py that every earlier test let live.  The
expected footprints are computed by hand from docs/kernel-contracts.md's rules: word i of a
launch is bytes 8i..8i+7 from the target's parameter base (sm_86: 0x160), and linreg-sgd's
contract says `//@ param 0 pointer read-write 4*lo[2]`, `//@ param 1 pointer read 4*lo[2]`, so
with W at A, G at B and lo[2] = n the launch may read [A, A+4n) and [B, B+4n) and write [A, A+4n).
"""
from __future__ import annotations

import struct
from pathlib import Path

import pytest

from bobc.certify.footprints import Footprint
from bobc.certify.kernels import parse_contract
from bobc.sim.contracts import ContractsMissing, LaunchContracts, read_contracts
from bobc.sim.faults import Unmodeled
from bobc.targets import SM86

REPO = Path(__file__).resolve().parents[2]
SGD = REPO / "examples" / "linear_regression" / "LinReg" / "kernels" / "linreg-sgd.sass"
QMD = 0x40000


def _held():
    return LaunchContracts({"linreg-sgd": parse_contract(SGD, "linreg-sgd")}, {QMD: "linreg-sgd"}, SM86)


def _bank0(*words):
    # bank 0 up to the parameter base (0x160 on sm_86: driver-owned words), then the launch's words
    return bytes(SM86.parameter_base) + struct.pack(f"<{len(words)}Q", *words)


def test_a_launch_is_held_to_its_contract_on_the_words_its_bank0_holds():
    footprint, maps = _held().held_to("launch 0", QMD, _bank0(0x1000, 0x2000, 8))
    # 4 * lo[2] = 32 bytes from each pointer; only W (read-write) is written
    assert footprint == Footprint([(0x1000, 0x1020), (0x2000, 0x2020)], [(0x1000, 0x1020)])
    assert maps == frozenset()


def test_a_bank0_holding_exactly_the_words_the_contract_reads_is_enough():
    # the count word is the block's last: a reader dropping the last word (or starting a word
    # late) would find no lo[2] and give no footprint
    footprint, _ = _held().held_to("launch 0", QMD, _bank0(0x1000, 0x2000, 3))
    assert footprint == Footprint([(0x1000, 0x100C), (0x2000, 0x200C)], [(0x1000, 0x100C)])


def test_the_same_kernel_on_other_words_is_held_to_those_words():
    # the same QMD's bank 0 edited between two launches (or two launches of one kernel): each is
    # held to what its own words say, never to the first one's footprint
    held = _held()
    first, _ = held.held_to("launch 0", QMD, _bank0(0x1000, 0x2000, 8))
    second, _ = held.held_to("launch 1", QMD, _bank0(0x1000, 0x2000, 16))
    assert first.writes == Footprint([], [(0x1000, 0x1020)]).writes
    assert second == Footprint([(0x1000, 0x1040), (0x2000, 0x2040)], [(0x1000, 0x1040)])


def test_words_the_contract_cannot_be_evaluated_on_are_unmodeled_not_unchecked():
    # no word 2: the extent 4*lo[2] has nothing to read, so no footprint -- refused, never run
    # with no footprint check
    with pytest.raises(Unmodeled, match=r"launch 0: its kernel's contract \(linreg-sgd\) gives no footprint"):
        _held().held_to("launch 0", QMD, _bank0(0x1000, 0x2000))


def test_a_qmd_the_simulator_was_not_told_of_is_unmodeled():
    with pytest.raises(Unmodeled, match=r"launch 3: the QMD at 0x40100 launches no kernel the simulator was told of"):
        _held().held_to("launch 3", QMD + 0x100, _bank0(0x1000, 0x2000, 8))


def test_a_kernel_given_no_contract_is_refused_by_name():
    held = LaunchContracts({}, {QMD: "linreg-sgd"}, SM86)
    with pytest.raises(ContractsMissing, match=r"launch 0: kernel linreg-sgd has no contract the simulator was given"):
        held.held_to("launch 0", QMD, _bank0(0x1000, 0x2000, 8))


def test_a_kernel_named_twice_is_refused_once(tmp_path):
    # read_contracts takes every launch's kernel (a kernel launched twice comes twice): the
    # refusal names each missing kernel once
    with pytest.raises(ContractsMissing) as caught:
        read_contracts(["no-such-kernel", "no-such-kernel"], SM86, [tmp_path])
    assert caught.value.message.count("no-such-kernel") == 1
