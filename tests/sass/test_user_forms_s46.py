"""SASS forms ptxas 13 writes for user PTX no corpus file had before session 46 (helper asmgaps5,
/work/notes/s46/probe-asmgaps5.md): tools/ptx_corpus/user_forms_s46.ptx (both targets: shfl.sync with a predicate out
and register lane / clamp, vote / match / redux with a register mask, 64-bit bit counts and prmt with a register
selector, f16(x2) min / max .ftz / .NaN, neg / abs, mul.sat, cvt with .sat / .relu.satfinite / .rna.tf32, ld / st
.volatile / .relaxed / .acquire / .release at each scope, the L1::evict_last / evict_first / no_allocate hints, 16-bit
atom.cas, ordered atomics at each scope, red.global.add.noftz.f16x2, .approx math, 24- and 16-bit integer forms,
mma.sync bf16 / tf32 / m16n8k8, ldmatrix .x1 / .trans, fences and barriers with a count, cp.async with a source size,
div.rn.ftz.f32 (its slow path's predicated BREAK), and mad.hi.cc.u32's carry read at once) and sm90_user_forms_s46.ptx (sm_90 alone: red / atom .bf16x2,
min / max .u16x2 / .s16x2 / .relu, ex2.approx.ftz.bf16x2).

The oracle is NVIDIA's: ptxas's words (the corpus, tests/sass/data/corpus-*.tsv) and nvdisasm's reading of them.
`bobc asm` refused each form in REFUSED_BEFORE ("no sm_86 encoding for 'LDG.E.EL.128 R,[MR.64]'", "CCTL takes no
modifier .PF2", ...); now one ptxas word of every form these files make assembles from nvdisasm's text to the same
128 bits and nvdisasm reads ours back as that text.  Whole kernels: tests/sass/test_listings.py assembles every kernel
of both files' listings to ptxas's .text.
"""
from __future__ import annotations

import pytest

from bobc.sass import assemble
from bobc.sass.learn import read_corpus
from bobc.sass.oracle import disassemble
from bobc.targets import TARGETS
from bobc.sass.syntax import parse_instruction
from tests.sass.test_latency_vs_ptxas import bobc_distance, corpus_pairs
from tests.sass.test_subword_constant_loads import assembles_and_decodes_back

FILES = ("user_forms_s46.ptx", "sm90_user_forms_s46.ptx")
# forms the tables lacked before session 46 (nvdisasm's text), each of which ptxas writes for these files
REFUSED_BEFORE = {
    "sm_86": ["LDG.E.EL.128 R12, [R18.64]", "STG.E.NA.128 [R2.64+0x10], R4", "MEMBAR.ALL.CTA",
              "ATOMG.E.OR.STRONG.SYS PT, R6, [R2.64+0x8], R19", "ATOMG.E.MAX.S32.STRONG.SM PT, R7, [R2.64+0xc], R19",
              "RED.E.ADD.F16x2.RN.STRONG.GPU [R4.64], R3", "HMUL2.SAT R6, R2.reuse, R3.reuse",
              "HMNMX2.FTZ.NAN R11, R2.reuse, R3, !PT", "F2FP.SATFINITE.RELU.PACK_AB R10, R2, R3",
              "HMMA.16816.F32.BF16 R12, R4.reuse, R8.reuse, RZ", "HMMA.1688.F32.TF32 R12, R4, R8, R12",
              "LDSM.16.M88 R4, [R18]", "LDGSTS.E.BYPASS.128.ZFILL [R9], [R6.64], P0",
              "LDGSTS.E.LTC128B [R9+0x810], [R2.64+0x410]", "@!P0 BREAK !P2, B2"],
    "sm_90": ["LDG.E.EL.128 R4, desc[UR4][R22.64]", "STG.E.NA.128 desc[UR4][R2.64+0x10], R8",
              "ATOMG.E.OR.STRONG.SYS PT, R6, desc[UR6][R12.64+0x4], R3",
              "REDG.E.ADD.F16x2.RN.STRONG.GPU desc[UR4][R4.64+0x8], R13",
              "REDG.E.ADD.BF16x2.RN.STRONG.GPU desc[UR4][R10.64], R13", "HMUL2.SAT R0, R2.reuse.H0_H0, R2.H1_H1",
              "HFMA2.MMA.FTZ.SAT R11, R2, R3, -RZ", "F2FP.SATFINITE.RELU.F16.F32.PACK_AB R10, R18, R19",
              "HMMA.16816.F32.BF16 R12, R4.reuse, R10.reuse, RZ", "LDSM.16.M88 R8, [R18+UR4]",
              "LDGSTS.E.BYPASS.128.ZFILL [R9], desc[UR4][R6.64], P0", "@!P0 BREAK !P2, B2",
              "@!P1 IMAD.MOV R9, RZ, RZ, 0x1"],
}


def _rows(arch):
    return [r for r in read_corpus(arch) if r.reference.split(":")[0] in FILES]


@pytest.mark.parametrize("arch", ["sm_86", "sm_90"])
def test_ptxas_writes_the_forms_refused_before_s46(arch):
    texts = {r.text for r in _rows(arch)}
    for text in REFUSED_BEFORE[arch]:
        assert text in texts, f"{arch}: ptxas no longer writes {text} for {FILES}"


@pytest.mark.parametrize("arch", ["sm_86", "sm_90"])
def test_one_word_of_each_form_assembles_and_decodes_back_s46(arch, needs_nvdisasm):
    """ptxas's word, from nvdisasm's text, bit for bit, for one row of every form key the two files make (branches
    apart: their offsets need the whole kernel, which test_listings assembles); nvdisasm reads ours back."""
    seen, rows = set(), []
    for row in _rows(arch):
        inst = parse_instruction(row.text)
        key = inst.key()
        if key in seen or inst.opcode in ("BRA", "BSSY", "CALL", "RET") or inst.mnemonic == "WARPSYNC.COLLECTIVE":
            continue
        seen.add(key)
        rows.append(row)
    assert len(rows) > 200
    assembles_and_decodes_back(rows, arch)


@pytest.mark.parametrize("arch", ["sm_86", "sm_90"])
def test_imad_hi_carry_out_read_as_ptxas_s46(arch):
    """IMAD.HI.U32's carry-out predicate: session 45's corpus had ptxas read it 9 (IADD3.X) / 8 (IMAD.X) cycles on,
    always behind a 64-bit division's other work, and KNOWN_BELOW held bobc's 6 / 5 as below ptxas.  In a chain with
    nothing else to issue (user_forms_s46.ptx carry_hi_chain: mad.hi.cc.u32 then addc / madc at once) ptxas reads it
    5 cycles on in IADD3.X and SEL and 4 in IMAD.X, so the 9 / 8 were slack: bobc's distance for each such corpus pair
    is no less than ptxas's least for its reader, and no more than the 9 a latency copied from the division would
    give (bobc keeps its own)."""
    least, mine = {}, {}
    for kind, distance, row, row2, *pair in corpus_pairs(arch):
        if not row.text.startswith("IMAD.HI.U32") or kind[2] != "P":
            continue
        words = row2.text.split()
        reader = words[1] if words[0].startswith("@") else words[0]
        least[reader] = min(least.get(reader, 99), distance)
        mine[reader] = max(mine.get(reader, 0), bobc_distance(arch, pair))
    assert least.get("IADD3.X") == 5 and least.get("IMAD.X") == 4, (arch, least)
    for reader, floor in least.items():
        assert floor <= mine[reader] < 9, (arch, reader, floor, mine[reader])


@pytest.mark.parametrize("arch", ["sm_86", "sm_90"])
def test_break_with_a_predicate_s46(arch, needs_nvdisasm):
    """BREAK's predicate (div.rn.ftz.f32's slow path: ptxas's `@!P0 BREAK !P2, B2`) takes BRA's field, 87..89 with
    its '!' at 90: nvdisasm reads each word back as written (it was "BREAK takes 1 operand, not 2")."""
    texts = ["BREAK P3, B2", "@P1 BREAK !P0, B5", "BREAK !P6, B0", "BREAK B1"]
    words = [assemble(f"[B------:R-:W-:-:S02] {text}\nEXIT\n", arch).code[:16] for text in texts]
    listed = disassemble(b"".join(words), TARGETS[arch].nvdisasm_arch)
    assert not listed.errors and [d.text for d in listed.lines] == texts


