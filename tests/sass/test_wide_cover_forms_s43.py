"""SASS forms ptxas 13 writes for ordinary CUDA-style PTX that `bobc asm` refused before session 43 (probe
asmcover2, /work/notes/s43/probe-asmcover2.md): tools/ptx_corpus/wide_cover_forms.ptx (both targets) and
wide_cover_sm90.ptx (sm_90 alone) -- directed-rounding conversions and binary64 arithmetic (I2F.U64.RP,
DMUL.RP, ...), DSETP against an immediate and every comparison, MUFU.RSQ64H / .EX2.F16 / .TANH.F16, a 16-bit
source's high half (`R10.H1`), FLO's complemented source (`~R4`), NANOSLEEP, 64-bit / f64 atomics and
reductions, and sm_90's VIADDMNMX, fp8 F2FP forms and WARPSYNC R.

The oracle is NVIDIA's: ptxas's words (the corpus, tests/sass/data/corpus-*.tsv) and nvdisasm's reading of
them.  Each form below was refused by name before ("no sm_90 encoding for 'DMUL.RP R,R,R'", "cannot read
operand 'R10.H1'", "unknown or unsupported opcode VIADDMNMX"); now each ptxas word assembles from nvdisasm's
text to the same 128 bits and nvdisasm reads our word back as that text, and each kernel's whole listing
assembles to ptxas's .text.
"""
from __future__ import annotations

import re

import pytest

from bobc.errors import BobcError
from bobc.sass import assemble
from bobc.sass.learn import PTX_CORPUS, read_corpus
from tests.sass.test_math_forms import _images as corpus_images
from tests.sass.test_math_forms import _text
from tests.sass.test_subword_constant_loads import assembles_and_decodes_back

BOTH = PTX_CORPUS / "wide_cover_forms.ptx"
SM90 = PTX_CORPUS / "wide_cover_sm90.ptx"
# the forms of the brief and the probe, as nvdisasm prints them (a regex each), per target
FORMS = {
    "I2F rounding": [r"^I2F\.U64\.RP R", r"^I2F\.U64\.RM R", r"^I2F\.U64\.RZ R", r"^I2F\.S64\.RP R",
                     r"^I2F\.F64\.U64\.RP R", r"^I2F\.F64\.S64\.RM R"],
    "F2F / F2I rounding": [r"^F2F\.F32\.F64\.RM R", r"^F2F\.F32\.F64\.RP R", r"^F2F\.F16\.F32\.RP R",
                           r"^F2F\.BF16\.F32\.RZ R", r"^F2I\.U64\.F64\.CEIL R", r"^F2I\.S64\.F64\.FLOOR R"],
    "binary64 rounding": [r"^DMUL\.RP R", r"^DMUL\.RM R", r"^DMUL\.RZ R", r"^DADD\.RP R", r"^DFMA\.RZ R"],
    "DSETP": [r"^DSETP\.GTU\.AND P\d, PT, \|R\d+\|, \+INF", r"^DSETP\.GT\.AND P\d, PT, R\d+(\.reuse)?, 1, PT",
              r"^DSETP\.NEU\.AND P\d, PT, R\d+(\.reuse)?, R", r"^DSETP\.NAN\.AND P"],
    "MUFU": [r"^MUFU\.RSQ64H R", r"^MUFU\.EX2\.F16 R\d+, R\d+$", r"^MUFU\.EX2\.F16 R\d+, R\d+\.H1$",
             r"^MUFU\.TANH\.F16 R"],
    "high half": [r"^I2F\.S16 R\d+, R\d+\.H1$", r"^I2F\.U16 R\d+, R\d+\.H1$", r"^F2F\.F64\.F16 R\d+, R\d+\.H1$",
                  r"^F2I\.F16\.TRUNC\.NTZ R\d+, R\d+\.H1$"],
    "FLO ~": [r"^FLO\.U32 R\d+, ~R\d+$"],
    "NANOSLEEP": [r"^NANOSLEEP 0x64$"],
    "atomics": [r"^ATOMG\.E\.ADD\.F64\.RN\.STRONG\.GPU P", r"^ATOMG\.E\.CAS\.64\.STRONG\.GPU P",
                r"^ATOMS\.CAS\.64 R", r"^ATOMS\.EXCH R"],
    "integer": [r"^IADD3\.X R\d+, P\d, R", r"^ISETP\.EQ\.U32\.OR\.EX P"],
}
FORMS_SM90 = {
    "VIADDMNMX": [r"^VIADDMNMX R\d+, R\d+(\.reuse)?, R\d+(\.reuse)?, R\d+(\.reuse)?, PT$", r"^VIADDMNMX R\d+, R\d+(\.reuse)?, 0x5, R\d+, !PT$"],
    "fp8": [r"^F2FP\.SATFINITE\.E4M3\.F32\.PACK_AB_MERGE_C R\d+, R\d+(\.reuse)?, R\d+(\.reuse)?, RZ$",
            r"^F2FP\.SATFINITE\.E5M2\.F32\.PACK_AB_MERGE_C R", r"^F2FP\.F16\.E4M3\.UNPACK_B R\d+, R\d+(\.reuse)?$",
            r"^F2FP\.F16\.E5M2\.UNPACK_B R\d+, R\d+\.H1$", r"^F2FP\.SATFINITE\.E4M3\.F16\.UNPACK_B_MERGE_C R\d+, R"],
    "WARPSYNC R": [r"^WARPSYNC R\d+$"],
    "bf16x2 atomic": [r"^ATOMG\.E\.ADD\.BF16x2\.RN\.STRONG\.GPU P"],
}


def _forms(arch):
    return {**FORMS, **(FORMS_SM90 if arch == "sm_90" else {})}


def _rows(arch):
    patterns = [p for group in _forms(arch).values() for p in group]
    return [r for r in read_corpus(arch) if r.reference.split(":")[0] in (BOTH.name, SM90.name)
            and any(re.match(p, r.text) for p in patterns)]


@pytest.mark.parametrize("arch", ["sm_86", "sm_90"])
def test_ptxas_writes_these_forms(arch):
    texts = [r.text for r in _rows(arch)]
    for name, patterns in _forms(arch).items():
        for pattern in patterns:
            assert any(re.match(pattern, t) for t in texts), f"{arch}: no {name} ({pattern}) in ptxas's corpus"


@pytest.mark.parametrize("arch", ["sm_86", "sm_90"])
def test_each_ptxas_word_assembles_and_decodes_back(arch, needs_nvdisasm):
    """ptxas's word, from nvdisasm's text, bit for bit; nvdisasm reads ours back as the same text."""
    assembles_and_decodes_back(_rows(arch), arch)


KERNELS = ["cvt_i2f_round", "cvt_halves", "f64_round", "f64_compares", "mufu_forms", "bit_forms", "mem_atomics",
           "warp_special"]


@pytest.mark.parametrize("arch", ["sm_86", "sm_90"])
@pytest.mark.parametrize("kernel", KERNELS)
def test_kernel_assembles_to_ptxas_text(arch, kernel, tmp_path, needs_ptxas, needs_nvdisasm):
    ptxas_image, bobc_image = corpus_images(arch, kernel, tmp_path, BOTH, "sm_90a" if arch == "sm_90" else None)
    assert _text(bobc_image, kernel) == _text(ptxas_image, kernel)


@pytest.mark.parametrize("kernel", ["int_minmax_sm90", "fp8_forms", "bf16_atomic_sm90"])
def test_sm90_kernel_assembles_to_ptxas_text(kernel, tmp_path, needs_ptxas, needs_nvdisasm):
    ptxas_image, bobc_image = corpus_images("sm_90", kernel, tmp_path, SM90, "sm_90a")
    assert _text(bobc_image, kernel) == _text(ptxas_image, kernel)


def _word(text: str, arch: str) -> int:
    return int.from_bytes(assemble(f"{text}\nEXIT\n", arch).code[:16], "little")


@pytest.mark.parametrize("arch", ["sm_86", "sm_90"])
def test_high_half_is_bit_60(arch):
    """`.H1` differs from the low half in bit 60 alone (ptxas: MUFU.EX2.F16 R2, R24 and R33, R24.H1 differ there
    and in the destination; nvdisasm reads bit 61 as .INVALID3)."""
    for text in ("I2F.S16 R15, R10", "F2F.F64.F16 R6, R10", "F2I.F16.TRUNC.NTZ R23, R10", "MUFU.EX2.F16 R2, R24"):
        assert _word(text + ".H1", arch) ^ _word(text, arch) == 1 << 60, text


def test_unpack_high_half_is_bit_88():
    """sm_90's F2FP.F16.E4M3.UNPACK_B reads B's high half with bit 88 (nvdisasm: R0.H1); the pack forms ignore
    that bit, so `.H1` there is refused."""
    assert _word("F2FP.F16.E4M3.UNPACK_B R11, R0.H1", "sm_90") ^ _word("F2FP.F16.E4M3.UNPACK_B R11, R0", "sm_90") == 1 << 88
    with pytest.raises(BobcError, match=r"'\.H1' selects the high half of a 16-bit source"):
        _word("F2FP.SATFINITE.E4M3.F32.PACK_AB_MERGE_C R8, R6, R7.H1, RZ", "sm_90")


@pytest.mark.parametrize("arch", ["sm_86", "sm_90"])
@pytest.mark.parametrize("text, message", [
    # a 32-bit source has no halves: the bit is not a half selection there
    ("I2F.F64 R14, R10.H1", r"I2F\.F64 has a S32 source \(it takes one with \.S16 or \.U16\)"),
    ("I2F.S16 R15, UR4.H1", r"'\.H1' \(a register's high half\) is not available on this operand of I2F"),
    ("MUFU.EX2 R2, R24.H1", r"MUFU\.EX2 has no \.F16 / \.BF16"),
    ("F2F.F16.F32 R2, R3.H1", r"F2F\.F16\.F32 has a F32 source"),
    # only B's register holds the selection
    ("FADD R2, R3.H1, R4", r"'\.H1' \(a register's high half\) is not available on this operand of FADD"),
])
def test_high_half_elsewhere_is_refused(arch, text, message):
    with pytest.raises(BobcError, match=message):
        _word(text, arch)


@pytest.mark.parametrize("arch", ["sm_86", "sm_90"])
def test_flo_complement(arch):
    """FLO.U32 R25, ~R4 (ptxas's bfind.u64 / clz.b64) is bit 63; '-' there is refused, not read as '~'."""
    assert _word("FLO.U32 R25, ~R4", arch) ^ _word("FLO.U32 R25, R4", arch) == 1 << 63
    with pytest.raises(BobcError, match="FLO complements an operand with '~', not '-'"):
        _word("FLO.U32 R25, -R4", arch)


def test_viaddmnmx_is_sm90_only():
    with pytest.raises(BobcError, match="VIADDMNMX"):
        _word("VIADDMNMX R15, R8, R9, R10, PT", "sm_86")
