"""`.reuse` on the opcodes ptxas 13 marks beyond the original set (probe s28 asm, coverage table):
R2UR, DADD, DFMA, DMUL, DSETP, F2FP, HFMA2, HMUL2, HMNMX2, HMMA were refused only for their reuse
flag -- a grid-stride saxpy's sm_90 listing (`R2UR UR9, R13.reuse`) could not be reassembled.
Each reuse bit is the operand position's (tables.layouts.REUSE_BIT; DSETP's B at 124 like FADD's),
checked against ptxas's words and, for every form of these opcodes, against nvdisasm."""
from __future__ import annotations

import re

import pytest

from bobc.errors import BobcError
from bobc.sass import assemble
from bobc.sass.encoder import Encoder, EncodeProblem, forms_for, match_layout
from bobc.sass.oracle import disassemble
from bobc.sass.syntax import Reg, parse_instruction, split_operands

# ptxas 13's words (probe s28 asm: fp_ops.ptx, tc_ops.ptx, random kernels p/fz, simple.ptx; -O3)
PTXAS = [
    ("sm_86", "F2FP.PACK_AB R52, R2.reuse, R3.reuse", 0x0c0fe200000000ff000000030234723e),
    ("sm_86", "HMNMX2 R40, R78.reuse, R79.reuse, PT", 0x0c0fe200038000000000004f4e287240),
    ("sm_86", "HFMA2 R53, R78.reuse, R79.reuse, R52.reuse", 0x1c0fe200000000340000004f4e357231),
    ("sm_86", "DFMA R4, R6.reuse, R8, R4", 0x042fe40000000004000000080604722b),
    ("sm_86", "DADD R22, R20.reuse, R22", 0x044ea200000000160000000014167229),
    ("sm_86", "DSETP.GEU.AND P2, PT, R18.reuse, R14, PT", 0x041e220003f4e0000000000e1200722a),
    ("sm_86", "DFMA R22, R4.reuse, R4, R14.reuse", 0x141fe2000000000e000000040416722b),
    ("sm_86", "DFMA R4, R2, R6.reuse, R6", 0x080fe20000000006000000060204722b),
    ("sm_86", "DADD R4, R6, -R6.reuse", 0x120e6200000008060000000006047229),
    ("sm_86", "HMUL2 R9, R28.reuse, R27", 0x041fe200000000000000001b1c097232),
    ("sm_86", "DMUL R6, R8.reuse, 1", 0x040e2200000000003ff0000008067828),
    ("sm_86", "HMMA.16816.F16 R2, R12, R4.reuse, R6", 0x080ff60000000806000000040c02723c),
    ("sm_90", "F2FP.F16.F32.PACK_AB R52, R2.reuse, R3.reuse", 0x0c0fe200000000ff000000030234723e),
    ("sm_90", "DADD R80, R58.reuse, R60", 0x040fe2000000003c000000003a507229),
    ("sm_90", "HMNMX2 R40, R6.reuse, R7.reuse, PT", 0x0c0fe200038000000000000706287240),
    ("sm_90", "DADD R18, RZ, R2.reuse", 0x100fe2000000000200000000ff127229),
    ("sm_90", "DFMA R6, R22, R18.reuse, R2", 0x082fe20000000002000000121606722b),
    ("sm_90", "DSETP.GEU.AND P0, PT, R24.reuse, R18.reuse, PT", 0x140fe20003f0e000000000121800722a),
    ("sm_90", "DSETP.GEU.AND P1, PT, R10, R4.reuse, PT", None),
    ("sm_90", "DFMA R10, R10, R12, R12.reuse", 0x100fe4000000000c0000000c0a0a722b),
    ("sm_90", "DMUL R16, R24.reuse, R24.reuse", 0x0c0fe200000000000000001818107228),
    ("sm_90", "R2UR UR9, R13.reuse", 0x040fe400000e0000000000000d0972ca),
    # ptxas 13.0.48 (CUDA 13.0), math_forms.ptx -O3: IABS's source sits in B and takes its reuse
    # flag (123); bobc asm refused the listing (probe s37 floor finding 2)
    ("sm_90", "IABS R16, R0.reuse", 0x080fe400000000000000000000107213),
]


@pytest.mark.parametrize("arch,text,word", [c for c in PTXAS if c[2] is not None])
def test_reuse_encodes_as_ptxas(arch, text, word):
    """Assembled with ptxas's control code (the listing's words), the whole word is ptxas's."""
    lo, hi = word & (1 << 64) - 1, word >> 64
    got = assemble(f"{text} /* {lo:#018x} */\n /* {hi:#018x} */\n", arch).instructions[0].word
    assert got == word, f"bits {[b for b in range(128) if (got ^ word) >> b & 1]} differ"


def test_dsetp_b_reuse_is_bit_124():
    word = assemble("DSETP.GEU.AND P1, PT, R10, R4.reuse, PT\nEXIT\n", "sm_90").instructions[0].word
    assert word >> 124 & 1 and not word >> 123 & 1 and not word >> 122 & 1


def test_r2ur_takes_reuse_on_sm90_only():
    with pytest.raises(BobcError) as info:
        assemble("R2UR UR9, R13.reuse\nEXIT\n", "sm_86")
    assert "R2UR takes no '.reuse' on sm_86" in info.value.message


def test_hmma_accumulator_takes_no_reuse():
    with pytest.raises(BobcError) as info:
        assemble("HMMA.16816.F32 R4, R8, R12, R4.reuse\nEXIT\n", "sm_86")
    assert "'.reuse' is not available on HMMA's" in info.value.message


NEW = ("R2UR", "DADD", "DFMA", "DMUL", "DSETP", "F2FP", "HFMA2", "HMUL2", "HMNMX2", "HMMA", "IABS")


@pytest.mark.parametrize("arch", ["sm_86", "sm_90"])
def test_every_reuse_flag_decodes_on_its_operand(arch, needs_nvdisasm):
    """For every form of these opcodes in the tables, `.reuse` on each vector source in turn:
    nvdisasm decodes the word to the text written (the flag on that operand, no other)."""
    cases = []
    for key, form in forms_for(arch).items():
        if key.split(".")[0].split(" ")[0] not in NEW:
            continue
        example = re.sub(r"^@!?U?P\w+\s+", "", form.example.replace(".reuse", ""))
        mnemonic, _, rest = example.partition(" ")
        parts = split_operands(rest)
        inst = parse_instruction(example)
        where = {id(o): n for n, o in enumerate(inst.operands)}
        for slot, operand in match_layout(inst):
            if slot not in ("Ra", "Sb", "Sc") or not isinstance(operand, Reg) or operand.bank != "R" \
                    or operand.index == 255:
                continue
            marked = list(parts)
            n = where[id(operand)]
            marked[n] = re.sub(r"^(-?(\|R\d+\||R\d+))", r"\1.reuse", marked[n].strip())
            text = f"{mnemonic} {', '.join(marked)}"
            try:
                cases.append((text, Encoder(arch).encode(parse_instruction(text), 0, 0x7F4)))
            except EncodeProblem as problem:   # the refusals: HMMA's C, sm_86's R2UR
                assert ("HMMA" in text and slot == "Sc") or (text.startswith("R2UR") and arch == "sm_86"), problem
    assert len(cases) >= 35
    decoded = disassemble(b"".join(w.to_bytes(16, "little") for _, w in cases), arch.replace("sm_", "SM"))
    assert not decoded.errors and len(decoded.lines) == len(cases)
    wrong = [f"{text} -> {line.text}" for (text, _), line in zip(cases, decoded.lines)
             if re.sub(r"\s+", "", text) != re.sub(r"\s+", "", line.text)]
    assert not wrong, wrong
