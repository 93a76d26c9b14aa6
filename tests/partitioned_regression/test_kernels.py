"""Seed 003's kernels (PartitionedRegression/Realization/*.sass) and the sm_86 device images of
its two plans: golden, nvdisasm-clean, contracts that match the code, launches that pass the
data block's words.

The goldens are tests/partitioned_regression/golden/*.bin (pr_golden.py regenerates them).  nvdisasm (the
test extra) is the independent decoder: every instruction decodes to the source's text.  The
QMDs are read back with bobc.sim.qmd_reader (open-gpu-doc field positions), the launches'
pointers from their constant bank 0 at sm_86's parameter base 0x160.
"""
from __future__ import annotations

import re
import struct

import pytest

from bobc.sass import assemble_kernel
from bobc.sass.oracle import disassemble
from bobc.targets import TARGETS

from pr_golden import HERE as GOLDEN, KERNELS, REALIZATION, plan_images

CASES = [(k, a) for k in KERNELS for a in ("sm_86", "sm_90")]
DATA = 0x2050000000             # PartitionedRegression.Coordinates.coordinateDataBase
PROGRAM = 0x2000000000          # coordinateProgramBase


@pytest.fixture(scope="module")
def nvdisasm_available():
    from bobc.sass.oracle import nvdisasm
    if nvdisasm() is None:
        pytest.skip("nvdisasm not installed (pip install nvidia-cuda-nvdisasm)")


@pytest.mark.parametrize("kernel,arch", CASES, ids=[f"{k}.{a}" for k, a in CASES])
def test_the_assembler_reproduces_the_golden_kernel(kernel, arch):
    assembled = assemble_kernel(REALIZATION / f"{kernel}.sass", TARGETS[arch])
    assert bytes(assembled.code) == (GOLDEN / f"{kernel}.{arch}.bin").read_bytes()


def source_instructions(kernel, arch):
    """The source's instructions as nvdisasm prints them for `arch` (params resolved)."""
    base = TARGETS[arch].parameter_base
    out = []
    for line in (REALIZATION / f"{kernel}.sass").read_text(encoding="utf-8").splitlines():
        line = line.split("//")[0].strip()
        if not line or line.startswith(".") or line.endswith(":") or line.startswith("BRA"):
            continue
        line = re.sub(r"param\+0x([0-9a-f]+)", lambda m: hex(base + int(m.group(1), 16)), line)
        line = line.replace("memory_descriptor", {"sm_86": "0x118", "sm_90": "0x208"}[arch])
        out.append(line.replace("RZ+", ""))
    return out


@pytest.mark.parametrize("kernel,arch", CASES, ids=[f"{k}.{a}" for k, a in CASES])
def test_nvdisasm_decodes_every_instruction_to_the_sources_text(kernel, arch, nvdisasm_available):
    image = (GOLDEN / f"{kernel}.{arch}.bin").read_bytes()
    decoded = disassemble(image, TARGETS[arch].nvdisasm_arch)
    assert decoded.errors == []
    texts = [re.sub(r"desc\[UR\d+\]", "", d.text).replace("RZ+", "") for d in decoded.lines]
    assert texts[:-1] == source_instructions(kernel, arch)      # the last is the trailing BRA
    assert texts[-1].startswith("BRA")


def test_the_arithmetic_is_binary32_products_and_unfused_binary64():
    """What "f32-products-f64-accumulation-v1" asks of the code: operands narrowed with F2F.F32.F64,
    products by FMUL (no FTZ: subnormals kept), widened by F2F.F64.F32; the update's binary64 is
    DMUL and DADD, no DFMA (one rounding each, as NumPy's float64 operations)."""
    step = source_instructions("coordinate-linear-step", "sm_86")
    update = source_instructions("coordinate-update", "sm_86")
    assert [t.split()[0] for t in step if t.split()[0] in ("F2F.F32.F64", "FMUL", "F2F.F64.F32", "DADD")] == [
        "F2F.F32.F64", "F2F.F32.F64", "FMUL", "F2F.F64.F32", "DADD", "F2F.F32.F64", "FMUL", "F2F.F64.F32"]
    assert [t.split()[0] for t in update if t.split()[0].startswith("D")] == ["DMUL", "DADD", "DMUL", "DADD"]
    assert not any("FTZ" in t or "DFMA" in t or "FFMA" in t for t in step + update)


@pytest.mark.parametrize("kernel", KERNELS)
def test_the_contract_declares_exactly_the_words_the_code_reads(kernel):
    from bobc.certify.kernels import check_code_reads, parse_contract
    contract = parse_contract(REALIZATION / f"{kernel}.sass")
    assert check_code_reads(contract) == []
    pointers = {a.index: (a.access, a.extent) for a in contract.arguments}
    if kernel == "coordinate-linear-step":
        assert pointers == {0: ("read", 8), 1: ("read", 8), 2: ("read", 8), 3: ("write", 24)}
    else:
        assert pointers == {0: ("read-write", 8), 1: ("read-write", 8), 2: ("read", 8), 3: ("read", 8), 4: ("read", 8)}


@pytest.fixture(scope="module")
def images():
    return plan_images()


def test_the_sm86_images_are_golden(images):
    for name, data in images.items():
        assert data == (GOLDEN / name).read_bytes(), name


def launches(images, plan):
    from bobc.sim.qmd_reader import read_launch
    qmd, program = images[f"{plan}-sm_86.qmd.bin"], images[f"{plan}-sm_86.program.bin"]
    out = []
    for i in range(len(qmd) // 256):
        d = read_launch(qmd[256 * i:256 * (i + 1)], 0xC7C0, f"{plan} QMD {i}")
        bank0 = program[d.cb0_address - PROGRAM:]
        out.append((d.program_address - PROGRAM, [struct.unpack_from("<Q", bank0, 0x160 + 8 * w)[0] - DATA
                                                  for w in range(5)], d.grid, d.block))
    return out


def test_the_training_launches_pass_the_data_blocks_words(images):
    """forward: linear step (w, x, 0.0) -> partial; backward: linear step (e, x, 0.0) -> gradient;
    update: (w, a, g, decay, rate) -- PartitionedRegression.Build.CoordinateMemory's offsets."""
    found = launches(images, "training")
    step_code = (GOLDEN / "coordinate-linear-step.sm_86.bin").read_bytes()
    update_code = (GOLDEN / "coordinate-update.sm_86.bin").read_bytes()
    program = images["training-sm_86.program.bin"]
    assert [place for place, *_ in found] == [0, 0, 512]
    assert program[:len(step_code)] == step_code and program[512:512 + len(update_code)] == update_code
    assert [words[:4] for _, words, *_ in found[:2]] == [[0, 16, 96, 40], [64, 16, 96, 72]]
    assert found[2][1] == [0, 8, 72, 24, 32]
    assert all(grid == (1, 1, 1) and block == (1, 1, 1) for *_, grid, block in found)
    assert len(images["training-sm_86.ring.bin"]) == 3 * 8


def test_the_prediction_launch_passes_weight_input_target_and_results(images):
    found = launches(images, "prediction")
    assert [(place, words[:4]) for place, words, *_ in found] == [(0, [0, 8, 16, 24])]
    assert images["prediction-sm_86.program.bin"][:336] == (GOLDEN / "coordinate-linear-step.sm_86.bin").read_bytes()


def test_every_region_of_the_program_images_decodes_cleanly(images, nvdisasm_available):
    lengths = {kernel: len((GOLDEN / f"{kernel}.sm_86.bin").read_bytes()) for kernel in KERNELS}
    for plan, regions in (("training", ((0, "coordinate-linear-step"), (512, "coordinate-update"))),
                          ("prediction", ((0, "coordinate-linear-step"),))):
        program = images[f"{plan}-sm_86.program.bin"]
        for place, kernel in regions:
            decoded = disassemble(program[place:place + lengths[kernel]], "SM86")
            assert decoded.errors == [] and decoded.lines[-2].text == "EXIT"
