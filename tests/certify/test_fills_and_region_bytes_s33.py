"""Probe s33 soundness findings 2 and 3: what the certifier checks is what the GPU runs.

Finding 2: a per-launch host fill (NvidiaPlanHostFill) rewrote a declared pointer word, or a
scalar a pointer's extent reads, after the certifier had checked the launch on its patched words;
now refused at the fill, naming the launch, the word and the pointer (as tensor maps already were).
Finding 3: a region whose bytes were not exactly an assembly (bytes appended, literal bytes) was
certified by its identity's source; now a build's region must be exactly its identity's kernel as
assembled, refused at the region's code saying what differs, and a region whose literal bytes are
that kernel is held to the kernel's registers."""
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
LINREG = REPOSITORY / "examples/linear_regression"
FIRST = SM86.parameter_base // 8
BASE = 0x10_0000_0000


# ---- finding 2, on hand-built launches -------------------------------------------------------

def plan_of(tmp_path, contract_text: str, words: dict[int, int], fills):
    source = tmp_path / "k.sass"
    source.write_text(contract_text)
    contract = parse_contract(source, "k")
    launch = Launch("k", 0, 0, (1, 1, 1), (32, 1, 1), 0x100,
                    tuple(ParameterPatch(FIRST + i, v) for i, v in sorted(words.items())), at=Span("P.bob", 3, 1))
    program = WholeProgramPlan("all", 0x86, 0xC7C0, 0x86, 0, 0, 0, 0, 256, 0, (Region("k", b"", 32, 32, 0, 0),),
                               (launch,), 1, 0, (), 0, 0)
    arena = DeviceArena((Resident("window", BASE, 0x10000, 1),), (Resident("y", BASE, 0x1000, 1),
                                                                  Resident("x", BASE + 0x1000, 0x1000, 1)), ())
    at = {"": Span("P.bob", 9, 7)}
    host = type("Host", (), {"fills": tuple(Fill(0, offset, 0, "word32", 0, at=at) for offset in fills)})()
    return dataclasses.replace(Plan(program, arena), host=host), {"k": contract}


CONTRACT = ("//@ param 0 pointer write 4*lo[1] Y\n"
            "//@ param 1 scalar N (lo), a (hi)\n"
            "//@ param 2 pointer read 4*hi[3] each lo[4] by 16 when word[5]&1 X\n"
            "//@ param 3 scalar b (lo), M (hi)\n"
            "//@ param 4 scalar batches (lo), c (hi)\n"
            "//@ param 5 scalar flags\n")
WORDS = {0: BASE, 1: 16 | 7 << 32, 2: BASE + 0x1000, 3: 2 << 32, 4: 3, 5: 1}


@pytest.mark.parametrize("offset, word, what", [
    (0, 0, "pointer argument 0 itself (Y; k.sass:1)"),
    (4, 0, "pointer argument 0 itself (Y; k.sass:1)"),
    (8, 1, "its extent 4*lo[1] of pointer argument 0 (Y; k.sass:1)"),
    (20, 2, "pointer argument 2 itself (X; k.sass:3)"),
    (28, 3, "its extent 4*hi[3] of pointer argument 2 (X; k.sass:3)"),
    (32, 4, "its batch count lo[4] of pointer argument 2 (X; k.sass:3)"),
    (44, 5, "its condition when word[5]&1 of pointer argument 2 (X; k.sass:3)"),
])
def test_a_fill_of_a_pointer_word_or_a_word_its_bounds_read_is_refused_at_the_fill(tmp_path, offset, word, what):
    plan, contracts = plan_of(tmp_path, CONTRACT, WORDS, [offset])
    (found,) = check_pointers(plan, contracts)
    half = "bytes 0..3" if offset % 8 == 0 else "bytes 4..7"
    assert found.message == (
        f"launch 0 (k): host fill 0 rewrites {half} of argument {word} (word {FIRST + word}) each step, which k's "
        f"contract reads as {what}: the certifier checked the pointer on the launch's patched words, and the "
        f"kernel would touch memory by the filled ones")
    assert found.at == Span("P.bob", 9, 7)


@pytest.mark.parametrize("offset", [12, 24, 36])
def test_a_fill_of_a_half_no_pointer_reads_is_not_refused(tmp_path, offset):
    """hi[1] (a), lo[3] (b) and hi[4] (c) are scalars the code reads, but no extent, batch or
    condition names those halves: lo[i] and hi[i] are 4 bytes each (kernel-contracts.md)."""
    plan, contracts = plan_of(tmp_path, CONTRACT, WORDS, [offset])
    assert check_pointers(plan, contracts) == []


# ---- findings 2 and 3, on the bundled LinReg plan, through `bobc check` ------------------------

def linreg(tmp_path) -> Path:
    shutil.copytree(LINREG / "LinReg", tmp_path / "LinReg")
    return tmp_path / "LinReg/Build/NativeHost.bob"


def patched(plan: Path, old: str, new: str) -> None:
    text = plan.read_text()
    assert text.count(old) == 1, old
    plan.write_text(text.replace(old, new))


def check(plan: Path):
    env = dict(os.environ, BOBC_CACHE_DIR="off", PYTHONPATH=str(REPOSITORY / "compiler"))
    return subprocess.run([sys.executable, "-m", "bobc", "check", str(plan), "--target", "sm_86"],
                          capture_output=True, text=True, env=env)


def line_of(plan: Path, text: str) -> int:
    return next(i for i, line in enumerate(plan.read_text().splitlines(), 1) if text in line)


NO_FILLS = "    (constructor NvidiaPlanHostFills NvidiaPlanHostFillsEnd)"


def fill(offset: int, value: int, rest: str) -> str:
    return (f"    (constructor NvidiaPlanHostFills NvidiaPlanHostFillsNext\n"
            f"      (constructor NvidiaPlanHostFill NvidiaPlanHostFillValue 1 {offset} 0 "
            f"(constructor NvidiaPlanHostEncoding NvidiaPlanHostEncodeWord32)\n"
            f"        (constructor NvidiaPlanHostScalar NvidiaPlanHostScalarConstant "
            f"(constructor NvidiaPlanHostConstant NvidiaPlanHostRatio {value} 1)))\n{rest})")


def test_linreg_fills_over_the_predictions_pointer_are_refused(tmp_path):
    """The probe's plan: launch 1's argument 2 (predictions) refilled with 0x10_0000_0000."""
    plan = linreg(tmp_path)
    patched(plan, NO_FILLS, fill(16, 0, fill(20, 16, NO_FILLS)))
    done = check(plan)
    assert done.returncode == 1, done.stdout + done.stderr
    at = line_of(plan, "NvidiaPlanHostFills NvidiaPlanHostFillsNext")
    for k, half in ((0, "0..3"), (1, "4..7")):
        assert (f"launch 1 (linreg-predict): host fill {k} rewrites bytes {half} of argument 2 (word 46) each step, "
                f"which linreg-predict's contract reads as pointer argument 2 itself") in done.stderr
    assert f"{plan}:{at}:5: launch 1 (linreg-predict): host fill 0" in done.stderr


def test_linreg_fill_of_the_dimension_an_extent_reads_is_refused(tmp_path):
    plan = linreg(tmp_path)
    patched(plan, NO_FILLS, fill(28, 100000, NO_FILLS))
    done = check(plan)
    assert done.returncode == 1, done.stdout + done.stderr
    assert ("launch 1 (linreg-predict): host fill 0 rewrites bytes 4..7 of argument 3 (word 47) each step, which "
            "linreg-predict's contract reads as its extent 4*hi[3]+4 of pointer argument 0") in done.stderr


PREDICT = ('def lrPredictBytes : Bytes =\n'
           '  (lrMachine (constructor SM86Program SM86ProgramAssembly b"LinReg/kernels/linreg-predict.sass" '
           'b"linreg-predict"))')


@pytest.mark.parametrize("code, differs", [
    ('(bytes-append (lrMachine (constructor SM86Program SM86ProgramAssembly b"LinReg/kernels/linreg-sgd.sass" '
     'b"linreg-sgd")) (bytes-from-nat-le 0 16))', "its 272 bytes differ from the kernel's 432 from byte 0x"),
    ('(bytes-append (lrMachine (constructor SM86Program SM86ProgramAssembly b"LinReg/kernels/linreg-predict.sass" '
     'b"linreg-predict")) (bytes-from-nat-le 0 16))', "it is the kernel's 432 bytes followed by 16 more"),
    ("(bytes-from-nat-le 0xdeadbeef 256)", "its 256 bytes differ from the kernel's 432 from byte 0x0 on"),
], ids=["another-kernel-appended", "own-kernel-appended", "literal"])
def test_a_region_whose_bytes_are_not_its_kernels_assembly_is_refused(tmp_path, code, differs):
    plan = linreg(tmp_path)
    patched(plan, PREDICT, f"def lrPredictBytes : Bytes =\n  {code}")
    done = check(plan)
    assert done.returncode == 1, done.stdout + done.stderr
    source = tmp_path / "LinReg/kernels/linreg-predict.sass"
    assert (f"{plan}:{line_of(plan, 'def lrPredictBytes')}:5: region linreg-predict's machine code is not its "
            f"identity's kernel {source} as this build assembles it for sm_86: {differs}") in done.stderr


def test_a_region_of_its_kernels_literal_bytes_is_held_to_the_kernels_registers(tmp_path):
    """The exact bytes, written as a literal (no SM86Program for the build's encoder to assemble):
    the same code, so certified as it; with 4 registers declared for a 24-register kernel, refused."""
    from bobc.kernel_cache import assemble_kernel

    plan = linreg(tmp_path)
    code = bytes(assemble_kernel(tmp_path / "LinReg/kernels/linreg-predict.sass", SM86).code)
    literal = 'b"' + "".join(f"\\x{b:02x}" for b in code) + '"'
    patched(plan, PREDICT, f"def lrPredictBytes : Bytes =\n  {literal}")
    done = check(plan)
    assert done.returncode == 0, done.stdout + done.stderr
    patched(plan, '(lrRegion b"linreg-predict" lrPredictBytes 24 64)', '(lrRegion b"linreg-predict" lrPredictBytes 4 64)')
    done = check(plan)
    assert done.returncode == 1, done.stdout + done.stderr
    assert "region linreg-predict needs 24 registers but declares 4" in done.stderr
