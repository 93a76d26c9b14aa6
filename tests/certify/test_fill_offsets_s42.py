"""Probe s42 newuser7: a host fill (NvidiaPlanHostFill) the kernel never sees was certified.

A new user's logistic regression wrote its per-update learning rate lr_t = 2/sqrt(t) with fills.
Three slips were certified, and the run then trained on the plan's baked word, exit 0:

1. a fill into a parameter word the kernel's contract does not declare (byte 44 = argument 5 of a
   kernel declaring 0..4, for byte 28): the kernel never reads it -- as a patch of an undeclared
   word, which the certifier refuses ("the kernel never reads it"); so too a word declared unused,
   and the half of a patched scalar the code does not read;
2. a fill at an offset that is no multiple of 4: a kernel reads its 32-bit scalars at multiples of
   4 (LDC), so such four bytes are half of one scalar and half of the next, never the value;
3. two fills writing the same bytes of one launch: the hosts write every fill of a launch, in the
   plan's order, before each issue of it (bobc.plan.schedule.lower), so the earlier never counts.

The expected verdicts come from the kernels' own contracts and code (which words `//@ param`
declares, which bytes its LDC reads), not from the certifier."""
from __future__ import annotations

import dataclasses
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from bobc.certify.kernels import parse_contract
from bobc.certify.pointers import check_pointers
from bobc.errors import Span
from bobc.plan.host import Fill
from bobc.plan.model import DeviceArena, Launch, ParameterPatch, Plan, Region, Resident, WholeProgramPlan
from bobc.targets import SM86

REPOSITORY = Path(__file__).resolve().parents[2]
FIRST = SM86.parameter_base // 8
BASE = 0x10_0000_0000


# ---- finding 1, on a hand-built launch ---------------------------------------------------------

CONTRACT = ("//@ param 0 pointer write 4*lo[1] Y\n"
            "//@ param 1 scalar N (lo), a (hi)\n"
            "//@ param 2 unused\n"
            "//@ param 3 scalar b (hi)\n"
            "    LDC.64 R2, c[0x0][param+0x8]\n"
            "    LDC R4, c[0x0][param+0x1c]\n")
WORDS = {0: BASE, 1: 16, 3: 0}


def plan_of(tmp_path, offsets):
    source = tmp_path / "k.sass"
    source.write_text(CONTRACT)
    contract = parse_contract(source, "k")
    launch = Launch("k", 0, 0, (1, 1, 1), (32, 1, 1), 0x100,
                    tuple(ParameterPatch(FIRST + i, v) for i, v in sorted(WORDS.items())), at=Span("P.bob", 3, 1))
    program = WholeProgramPlan("all", 0x86, 0xC7C0, 0x86, 0, 0, 0, 0, 256, 0, (Region("k", b"", 32, 32, 0, 0),),
                               (launch,), 1, 0, (), 0, 0)
    arena = DeviceArena((Resident("window", BASE, 0x10000, 1),), (Resident("y", BASE, 0x1000, 1),), ())
    at = {"": Span("P.bob", 9, 7)}
    host = type("Host", (), {"fills": tuple(Fill(0, offset, 1, "binary32", 0, at=at) for offset in offsets)})()
    return dataclasses.replace(Plan(program, arena), host=host), {"k": contract}


@pytest.mark.parametrize("offset, why", [
    (40, "argument 5 (word 49), which k's contract does not declare"),
    (36, "argument 4 (word 48), which k's contract does not declare"),
    (20, "argument 2 (word 46), which k's contract declares unused"),
    (24, "argument 3 (word 47), a scalar of k's contract (b (hi); k.sass:4) whose code reads only its bytes 4..7 "
         "(LDC R4, c[0x0][param+0x1c] at k.sass:6)"),
])
def test_a_fill_of_bytes_the_kernel_never_reads_is_refused_at_the_fill(tmp_path, offset, why):
    plan, contracts = plan_of(tmp_path, [offset])
    (found,) = check_pointers(plan, contracts)
    half = "bytes 0..3" if offset % 8 == 0 else "bytes 4..7"
    assert found.message.startswith(f"launch 0 (k): host fill 0 writes {half} of {why}"), found.message
    assert found.message.endswith("the kernel never reads the fill's value, and runs on the word the plan baked")
    assert found.at == Span("P.bob", 9, 7)
    assert "argument i's low half is byte 8i, its high half 8i + 4" in found.hint
    assert "declares: 0, 1, 2, 3" in found.hint


@pytest.mark.parametrize("offset", [12, 28, 8])
def test_a_fill_of_bytes_the_code_reads_is_not_refused(tmp_path, offset):
    """a (hi[1], LDC.64 at param+0x8) and b (hi[3], LDC at param+0x1c) are read by the code; N (lo[1],
    byte 8) is too -- a fill of it is refused as a word the pointer's extent 4*lo[1] reads, not here."""
    plan, contracts = plan_of(tmp_path, [offset])
    found = check_pointers(plan, contracts)
    assert not any("never reads the fill's value" in f.message for f in found), found


# ---- findings 1 to 3, through `bobc check` on LinReg with a learning-rate fill -------------------
# LinReg's first training launch is launch 2 (linreg-sgd, after the forward loss-grad and predict);
# its contract declares arguments 0..2, and its code reads word 2 (count lo, lr hi) with
# LDC.64 c[0x0][param+0x10]: the learning rate is bytes 20..23 from the parameter base.

NO_FILLS = "    (constructor NvidiaPlanHostFills NvidiaPlanHostFillsEnd)"


def fill(launch: int, offset: int, rest: str) -> str:
    return (f"    (constructor NvidiaPlanHostFills NvidiaPlanHostFillsNext\n"
            f"      (constructor NvidiaPlanHostFill NvidiaPlanHostFillValue {launch} {offset} 1 "
            f"(constructor NvidiaPlanHostEncoding NvidiaPlanHostEncodeBinary32)\n"
            f"        (constructor NvidiaPlanHostScalar NvidiaPlanHostScalarConstant "
            f"(constructor NvidiaPlanHostConstant NvidiaPlanHostRatio 1 20)))\n{rest})")


def check_linreg(tmp_path, fills: str):
    shutil.copytree(REPOSITORY / "examples/linear_regression/LinReg", tmp_path / "LinReg")
    plan = tmp_path / "LinReg/Build/NativeHost.bob"
    text = plan.read_text()
    assert text.count(NO_FILLS) == 1
    plan.write_text(text.replace(NO_FILLS, fills))
    env = dict(os.environ, BOBC_CACHE_DIR="off", PYTHONPATH=str(REPOSITORY / "compiler"))
    return subprocess.run([sys.executable, "-m", "bobc", "check", str(plan), "--target", "sm_86"],
                          capture_output=True, text=True, env=env, cwd=tmp_path)


def test_linreg_with_its_learning_rate_filled_certifies(tmp_path):
    done = check_linreg(tmp_path, fill(2, 20, NO_FILLS))
    assert done.returncode == 0, done.stdout + done.stderr


def test_linreg_with_the_fill_past_the_declared_words_is_refused(tmp_path):
    """byte 28 is argument 3's high half: linreg-sgd declares 0..2 (the probe's slip)."""
    done = check_linreg(tmp_path, fill(2, 28, NO_FILLS))
    assert done.returncode == 1, done.stdout + done.stderr
    assert ("launch 2 (linreg-sgd): host fill 0 writes bytes 4..7 of argument 3 (word 47), which linreg-sgd's "
            "contract does not declare: the kernel never reads the fill's value") in done.stderr
    assert "Traceback" not in done.stderr


def test_linreg_with_a_misaligned_fill_is_refused(tmp_path):
    """bytes 18..21: the count's high half and the rate's low half."""
    done = check_linreg(tmp_path, fill(2, 18, NO_FILLS))
    assert done.returncode == 1, done.stdout + done.stderr
    assert ("fill 0 writes bytes 18..21 of launch 2 (linreg-sgd)'s parameters, at an offset that is no multiple "
            "of 4: its binary32 would straddle two of the 32-bit scalars a kernel reads") in done.stderr
    assert "(argument 2: 16 or 20)" in done.stderr


def test_linreg_with_two_fills_of_one_rate_is_refused(tmp_path):
    done = check_linreg(tmp_path, fill(2, 20, fill(2, 20, NO_FILLS)))
    assert done.returncode == 1, done.stdout + done.stderr
    assert ("fill 1 writes bytes 20..23 of launch 2 (linreg-sgd)'s parameters, which fill 0 writes too: the host "
            "writes every fill of a launch, in order, before each issue of it, so fill 0's value never reaches "
            "the kernel") in done.stderr
    # one fill on each of two launches is no conflict
    assert check_linreg(tmp_path / "two", fill(2, 20, fill(4, 20, NO_FILLS))).returncode == 0
