"""SASS forms the simulator models since probe s44 simops that `bobc asm` refused before session 44 (helper
asmsim44, /work/notes/s44/probe-asmsim44.md): tools/ptx_corpus/sim_forms_s44.ptx (both targets) and
sm90_sim_forms_s44.ptx (sm_90 only) -- simops' probe kernels (tests/sass/test_sim_roundings_s44.py,
test_sim_xorsign_s44.py, test_sim_mufu16_s44.py) plus fma / add .sat .f16.

The oracle is NVIDIA's: ptxas 13's words (the corpus, tests/sass/data/corpus-*.tsv) and nvdisasm's reading of them.
Each form below was refused before ("no sm_86 encoding for 'F2F.F16.F64.RZ R,R'", "no sm_86 form of F2FP has
.SATFINITE", "no sm_90 encoding for 'MUFU.TANH.BF16 R,R'", ...; F2FP.RELU.MERGE_C also "operand fields disagree" when
learned, its one source being B's); now each ptxas word assembles from nvdisasm's text to the same 128 bits and
nvdisasm reads our word back as that text, and each kernel's whole listing assembles to ptxas's .text -- so
tests/gpu/prepare.sh builds bobc's cubin of every s44 probe kernel.
"""
from __future__ import annotations

import re

import pytest

from bobc.sass import assemble
from bobc.sass.learn import PTX_CORPUS, read_corpus
from tests.sass.test_math_forms import _images as corpus_images
from tests.sass.test_math_forms import _text
from tests.sass.test_subword_constant_loads import assembles_and_decodes_back

BOTH = PTX_CORPUS / "sim_forms_s44.ptx"
SM90 = PTX_CORPUS / "sm90_sim_forms_s44.ptx"
R = r"R\d+"
# the refused forms, as nvdisasm prints them (a regex each), per target
FORMS = {
    "F2F.F16.F64 directed": [rf"^F2F\.F16\.F64\.R[MPZ] {R}, {R}$"],
    "FRND .FTZ / .F16": [rf"^FRND\.FTZ {R}, {R}$", rf"^FRND\.FTZ\.(FLOOR|CEIL|TRUNC) {R}, {R}$",
                         rf"^FRND\.F16\.(FLOOR|CEIL|TRUNC) {R}, {R}$"],
    "I2F.F16": [rf"^I2F\.F16\.R[MPZ] {R}, {R}$", rf"^I2F\.F16\.U32 {R}, {R}$", rf"^I2F\.F16\.U32\.R[MPZ] {R}, {R}$"],
    "f16 .FTZ": [rf"^HADD2\.FTZ {R}, {R}, {R}$", r"^HSETP2\.LT\.FTZ\.AND P\d, P\d, R\d+, R\d+, PT$"],
    "HMNMX2.XORSIGN": [rf"^HMNMX2\.XORSIGN {R}, \|{R}\|, \|{R}\|, !?PT$",
                       rf"^HMNMX2\.XORSIGN {R}, \|{R}\|\.H0_H0, \|{R}\|\.H0_H0, !PT$"],
    "HADD2.SAT": [rf"^HADD2\.SAT {R}, {R}, {R}$", rf"^HADD2\.SAT {R}, {R}\.H0_H0, {R}\.H1_H1$"],
}
FORMS_SM86 = {
    "F2FP": [rf"^F2FP\.PACK_AB\.RZ {R}, {R}, {R}$", rf"^F2FP\.BF16\.PACK_AB\.RZ {R}, {R}, {R}$",
             rf"^F2FP\.RELU\.MERGE_C {R}, {R}, RZ$", rf"^F2FP\.SATFINITE\.PACK_AB {R}, {R}, {R}$"],
    "HFMA2 .FTZ": [rf"^HFMA2\.FTZ {R}, {R}, {R}, {R}$"],
}
FORMS_SM90 = {
    "F2FP": [rf"^F2FP\.F16\.F32\.PACK_AB\.RZ {R}, {R}, {R}$", rf"^F2FP\.BF16\.F32\.PACK_AB\.RZ {R}, {R}, {R}$",
             rf"^F2FP\.RELU\.F16\.F32\.MERGE_C {R}, {R}, RZ$", rf"^F2FP\.SATFINITE\.F16\.F32\.PACK_AB {R}, {R}, {R}$",
             rf"^F2FP\.SATFINITE\.E5M2\.F16\.UNPACK_B_MERGE_C {R}, {R}, RZ$",
             rf"^F2FP\.SATFINITE\.RELU\.E4M3\.F32\.PACK_AB_MERGE_C {R}, {R}, {R}, RZ$"],
    "MUFU .BF16": [rf"^MUFU\.(EX2|TANH)\.BF16 {R}, {R}$", rf"^MUFU\.(EX2|TANH)\.BF16 {R}, {R}\.H1$"],
    "HFMA2 .FTZ / .SAT": [rf"^HFMA2\.MMA\.FTZ {R}, {R}, {R}, {R}$", rf"^HFMA2\.MMA\.SAT {R}, {R}, {R}, {R}$"],
}


def _kernels(ptx) -> list[str]:
    return re.findall(r"^\.visible \.entry (\w+)\(", ptx.read_text(), re.M)


def _forms(arch):
    return {**FORMS, **(FORMS_SM86 if arch == "sm_86" else FORMS_SM90)}


def _rows(arch):
    patterns = [p for group in _forms(arch).values() for p in group]
    return [r for r in read_corpus(arch) if r.reference.split(":")[0] in (BOTH.name, SM90.name)
            and any(re.match(p, r.text.replace(".reuse", "")) for p in patterns)]


@pytest.mark.parametrize("arch", ["sm_86", "sm_90"])
def test_ptxas_writes_these_forms(arch):
    texts = [r.text.replace(".reuse", "") for r in _rows(arch)]
    for name, patterns in _forms(arch).items():
        for pattern in patterns:
            assert any(re.match(pattern, t) for t in texts), f"{arch}: no {name} ({pattern}) in ptxas's corpus"


@pytest.mark.parametrize("arch", ["sm_86", "sm_90"])
def test_each_ptxas_word_assembles_and_decodes_back(arch, needs_nvdisasm):
    """ptxas's word, from nvdisasm's text, bit for bit; nvdisasm reads ours back as the same text."""
    assembles_and_decodes_back(_rows(arch), arch)


@pytest.mark.parametrize("arch, ptx, kernel", [(a, BOTH, k) for a in ("sm_86", "sm_90") for k in _kernels(BOTH)]
                         + [("sm_90", SM90, k) for k in _kernels(SM90)])
def test_kernel_assembles_to_ptxas_text(arch, ptx, kernel, tmp_path, needs_ptxas, needs_nvdisasm):
    ptxas_image, bobc_image = corpus_images(arch, kernel, tmp_path, ptx, "sm_90a" if arch == "sm_90" else None)
    assert _text(bobc_image, kernel) == _text(ptxas_image, kernel)


def _word(text: str, arch: str) -> int:
    return int.from_bytes(assemble(f"{text}\nEXIT\n", arch).code[:16], "little")


@pytest.mark.parametrize("arch, text", [("sm_86", "F2FP.RELU.MERGE_C R0, {}, RZ"),
                                        ("sm_90", "F2FP.RELU.F16.F32.MERGE_C R0, {}, RZ")])
def test_merge_c_source_is_at_b(arch, text):
    """F2FP.RELU.MERGE_C's one source sits in B's field (32..39), A's (24..31) holding RZ: ptxas 13's
    F2FP.RELU.MERGE_C R0, R2, RZ is 0x00000002ff00723e (cvt.rn.relu.f16.f32, both targets)."""
    assert _word(text.format("R2"), arch) & 0xFFFF_FFFF_FFFF_FFFF == 0x00000002FF00723E
    assert _word(text.format("R9"), arch) ^ _word(text.format("R2"), arch) == (9 ^ 2) << 32
