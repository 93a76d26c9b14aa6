"""SASS forms ptxas 13 writes for user PTX no corpus file had before session 45 (helper asmgaps4,
/work/notes/s45/probe-asmgaps4.md): tools/ptx_corpus/user_forms_s45.ptx (both targets: 64- and 32-bit division and
remainder, bit counts, prmt modes, funnel shifts, bfe / bfi, wide multiplies, f64 roundings and rcp / sqrt / div in each
rounding, cvt between every integer width and f16 / f32 / f64 in each rounding and with .sat, testp / copysign, vector
loads and stores with each cache hint, 64-bit and shared atomics, bar.red, vote / match, nanosleep and the timers) and
sm90_user_forms_s45.ptx (sm_90 alone: cvt to and from .bf16 of f64 and of the integers).

The oracle is NVIDIA's: ptxas's words (the corpus, tests/sass/data/corpus-*.tsv) and nvdisasm's reading of them.
`bobc asm` refused each form below before ("no sm_86 encoding for 'F2I.S8.F16.NTZ R,R'", "unknown or unsupported opcode
BREAK", "unknown special register SR_GLOBALTIMERHI", "VIADDMNMX takes no '-' on this operand"); now one ptxas word of
every form these files make assembles from nvdisasm's text to the same 128 bits and nvdisasm reads ours back as that
text.  Whole kernels: tests/sass/test_listings.py assembles every kernel of both files' listings to ptxas's .text.
"""
from __future__ import annotations

import pytest

from bobc.errors import BobcError
from bobc.sass import assemble
from bobc.sass.learn import read_corpus
from bobc.sass.syntax import parse_instruction
from tests.sass.test_subword_constant_loads import assembles_and_decodes_back

FILES = ("user_forms_s45.ptx", "sm90_user_forms_s45.ptx")
# forms the tables lacked before session 45 (nvdisasm's text), each of which ptxas writes for these files
REFUSED_BEFORE = {
    "sm_86": ["@!P0 BREAK B2", "CS2R.32 R18, SR_GLOBALTIMERHI", "S2R R23, SR_SMEMSZ", "F2I.S8.F16.NTZ R0, R0",
              "F2I.U16.F64.CEIL R13, R12", "I2F.F16.S64.RM R19, R10", "FFMA.RM.SAT R7, R11, R3, R2",
              "BAR.RED.POPC.DEFER_BLOCKING 0x2, 0x40, P2", "NANOSLEEP R4"],
    "sm_90": ["@!P0 BREAK B2", "CS2R.32 R10, SR_GLOBALTIMERHI", "S2UR UR6, SR_SMEMSZ", "S2R R18, SR_VIRTCFG",
              "VIADDMNMX R9, R10, -R9, 0xb9600000, !PT", "F2F.BF16.F64.RM R5, R6", "VOTE.EQ P3, P3"],
}


def _rows(arch):
    return [r for r in read_corpus(arch) if r.reference.split(":")[0] in FILES]


@pytest.mark.parametrize("arch", ["sm_86", "sm_90"])
def test_ptxas_writes_the_forms_refused_before(arch):
    texts = {r.text for r in _rows(arch)}
    for text in REFUSED_BEFORE[arch]:
        assert text in texts, f"{arch}: ptxas no longer writes {text} for {FILES}"


@pytest.mark.parametrize("arch", ["sm_86", "sm_90"])
def test_one_word_of_each_form_assembles_and_decodes_back(arch, needs_nvdisasm):
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
    assert len(rows) > 300
    assembles_and_decodes_back(rows, arch)


def _word(text: str, arch: str) -> int:
    return int.from_bytes(assemble(f"[B------:R-:W-:-:S02] {text}\nEXIT\n", arch).code[:16], "little")


@pytest.mark.parametrize("arch", ["sm_86", "sm_90"])
def test_break_is_bsyncs_slot(arch):
    """BREAK Bn: the barrier at 16..19, BSYNC's field, the guard where every opcode's is (ptxas: @!P0 BREAK B2 is
    0x...28942, @P1 BREAK B2 0x...21942, @!P1 BREAK B0 0x...9942)."""
    assert _word("BREAK B3", arch) ^ _word("BREAK B2", arch) == (3 ^ 2) << 16
    assert _word("BREAK B2", arch) & 0xFFF == 0x942


def test_special_registers_of_the_timers():
    """SR_GLOBALTIMERHI 0x53, SR_SMEMSZ 0x32, SR_VIRTCFG 0x02 at 72..79 (ptxas's words above)."""
    for name, value in (("SR_GLOBALTIMERHI", 0x53), ("SR_SMEMSZ", 0x32), ("SR_VIRTCFG", 0x02)):
        assert _word(f"S2R R1, {name}", "sm_90") >> 72 & 0xFF == value


def test_viaddmnmx_negates_b_not_c():
    """'-' on VIADDMNMX's written B: bit 75 where it lands in C (ptxas's R9, R10, -R9, 0xb9600000, !PT), 63 at B;
    on a written C nvdisasm prints no '-' for bit 75, so it is refused, never dropped."""
    assert _word("VIADDMNMX R9, R10, -R9, R11, PT", "sm_90") ^ _word("VIADDMNMX R9, R10, R9, R11, PT", "sm_90") == 1 << 63
    with pytest.raises(BobcError, match="VIADDMNMX takes no '-' on this operand"):
        _word("VIADDMNMX R9, R10, R11, -R9, PT", "sm_90")


def test_ptxas_odd_bf16_destination_assembles():
    """ptxas's sm_90 text for cvt.rm.bf16.f64 into R5 assembles (it was refused as 'R5..R6 must start at a multiple
    of 2' -- with the form learned, tools/ptx_corpus/sm90_user_forms_s45.ptx)."""
    assemble("[B------:R-:W-:-:S02] F2F.BF16.F64.RM R5, R6\nEXIT\n", "sm_90")
