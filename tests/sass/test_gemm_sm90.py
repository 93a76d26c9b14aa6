"""The sm_90 product kernels' generator (bobc.sass.generate.gemm_sm90) on the CPU.

What runs them is tests/gpu/test_sm90_gemm.py (the H200: every output bit for bit the HMMA kernels');
here: the bundled example's committed variants are the generator's output, assemble for sm_90 into
code nvdisasm decodes whole within the plan's register budget, declare the tensor maps the backend
writes, declare the shared memory their ring needs, and the asynchronous units'
uniform operands are held 9 cycles (the scheduler's rule, checked on the assembled control codes)."""
from __future__ import annotations

from pathlib import Path

import pytest

from bobc.certify.kernels import parse_contract
from bobc.sass import assemble_kernel
from bobc.sass.generate import gemm, gemm_sm90
from bobc.sass.oracle import disassemble
from bobc.targets import TARGETS

REPO = Path(__file__).resolve().parents[2]
SOURCES = REPO / "examples" / "coppelius" / "Realization" / "Nvidia" / "SM86"
PREFIX = "coppelius-gemm"


def test_the_committed_variants_are_the_generators_output():
    assert gemm_sm90.main(["--prefix", PREFIX, "--check", str(SOURCES)]) == 0


@pytest.mark.parametrize("name", sorted(gemm.VARIANTS))
def test_each_assembles_whole_for_sm90_within_the_budget(name, needs_nvdisasm):
    source = SOURCES / f"{gemm.VARIANTS[name].identity(PREFIX)}.sm_90.sass"
    assembled = assemble_kernel(source, TARGETS["sm_90"])
    decoded = disassemble(bytes(assembled.code), "SM90")
    assert not decoded.stderr and len(decoded.lines) == len(assembled.instructions)
    assert assembled.registers <= gemm.REGISTERS
    assert assembled.shared_bytes == gemm_sm90.shared_bytes()        # `.shared`: what the plan asks for it


@pytest.mark.parametrize("name", sorted(gemm.VARIANTS))
def test_contract_declares_the_base_words_and_two_tensor_maps(name):
    variant = gemm.VARIANTS[name]
    ours = parse_contract(SOURCES / f"{variant.identity(PREFIX)}.sm_90.sass")
    base = parse_contract(SOURCES / f"{variant.identity(PREFIX)}.sass")
    assert [a for a in ours.arguments if a.kind != "tensormap"] == list(base.arguments)
    assert [a.index for a in ours.arguments if a.kind == "tensormap"] == [17, 18]
    maps = {m.word: m for m in ours.tensor_maps}
    assert sorted(maps) == [17, 18] and (maps[17].pointer, maps[18].pointer) == (0, 1)
    # A (word 0): K contiguous for nn and nt (dims K, M), M contiguous for tn (dims M, K); B likewise
    a_inner = "lo[7]" if variant.a_along_k else "lo[6]"
    b_inner = "lo[7]" if variant.b_along_k else "hi[6]"
    assert (maps[17].dims[0], maps[18].dims[0]) == (a_inner, b_inner)
    assert all(m.box == (64, 64, 1) and m.swizzle == "128b" and m.element == "binary16" for m in maps.values())


def test_stages_must_be_a_power_of_two():
    with pytest.raises(ValueError, match="power of two"):
        gemm_sm90.generate(gemm.VARIANTS["nt"], PREFIX, 3)


def test_uniform_operands_of_the_asynchronous_units_are_held_nine_cycles():
    """Walk the assembled code: from each uniform ALU write to the first HGMMA / SYNCS / UTMALDG
    reading that register (straight-line), at least ASYNC_UNIFORM_READ cycles of stalls."""
    import re
    assembled = assemble_kernel(SOURCES / f"{gemm.VARIANTS['nn'].identity(PREFIX)}.sm_90.sass", TARGETS["sm_90"])
    insts = assembled.instructions
    checked = 0
    for j, inst in enumerate(insts):
        opcode = inst.text.split()[0]
        if not opcode.startswith(("HGMMA", "SYNCS", "UTMALDG")):
            continue
        registers = {int(r) for r in re.findall(r"UR(\d+)", inst.text)}
        m = re.search(r"UTMALDG\.3D \[UR(\d+)\], \[UR(\d+)\]", inst.text)
        if m:
            registers |= {int(m.group(1)) + i for i in range(5)} | {int(m.group(2)) + 1}
        m = re.search(r"gdesc\[UR(\d+)\]", inst.text)
        if m:
            registers |= {int(m.group(1)) + i for i in range(4)}
        cycles = 0
        for k in range(j - 1, -1, -1):
            cycles += insts[k].control.stall
            if insts[k].address in assembled.labels.values() if isinstance(assembled.labels, dict) else False:
                break
            written = re.match(r"(?:@!?U?P\w+\s+)?U\w+(?:\.\w+)*\s+UR(\d+)", insts[k].text)
            if written and int(written.group(1)) in registers:
                assert cycles >= 9 or insts[k].text.startswith(("ULDC", "S2UR")), \
                    f"{insts[k].text} -> {inst.text}: {cycles} cycles"
                registers.discard(int(written.group(1)))
                checked += 1
    assert checked > 20
