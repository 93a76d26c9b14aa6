"""SASS forms ptxas 13 writes for the PTX a new user writes that `bobc asm` refused before session 44 (helper
asm86, /work/notes/s44/probe-asm86.md): tools/ptx_corpus/user_forms.ptx (both targets) -- warp reductions over a
computed or loaded member mask, spin loops, 64-bit comparisons of kernel parameters, atomics in loops, predicated
streaming stores.

The oracle is NVIDIA's: ptxas's words (the corpus, tests/sass/data/corpus-*.tsv) and nvdisasm's reading of them.
Each form below was refused before ("the sm_86 tables have no form of YIELD", "unknown or unsupported opcode USEL",
"UISETP takes 5 operands, not 6", "R2UR takes 2 operands, not 3", "no sm_90 encoding for 'WARPSYNC.EXCLUSIVE R'",
BRA.CONV / BRA.DIV with a uniform register); now each ptxas word assembles from nvdisasm's text to the same 128 bits
and nvdisasm reads our word back as that text, and each kernel's whole listing assembles to ptxas's .text.
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

PTX = PTX_CORPUS / "user_forms.ptx"
# the refused forms, as nvdisasm prints them (a regex each), per target
FORMS = {
    "64-bit uniform compare": [r"^UISETP\.GE\.U32\.AND UP\d, UPT, UR\d+, UR\d+, UPT$",
                               r"^UISETP\.GE\.U32\.AND\.EX UP\d, UPT, UR\d+, UR\d+, UPT, UP\d$",
                               r"^UISETP\.NE\.(U32\.)?AND\.EX UP\d, UPT, UR\d+, UR\d+, UPT, UP\d$"],
    "USEL": [r"^USEL UR\d+, URZ, 0x1, UP\d$", r"^USEL UR\d+, UR\d+, 0x[0-9a-f]+, !UP\d$",
             r"^USEL UR\d+, UR\d+, UR\d+, !?UP\d$"],
    "streaming store": [r"^@!P\d STG\.E\.EF "],
}
FORMS_SM86 = {
    "YIELD": [r"^YIELD$"],
    "register member mask": [r"^R2UR P\d, URZ, R\d+$", r"^LOP3\.LUT P\d, RZ, R\d+, UR\d+, R\d+, 0x40, !PT$",
                             r"^@!P\d BRA\.CONV UR\d+, 0x[0-9a-f]+$", r"^@!P\d BRA\.DIV UR\d+, 0x[0-9a-f]+$"],
    "64-bit bound": [r"^ISETP\.GE\.U32\.AND\.EX P\d, PT, R\d+, c\[0x0\]\[0x16c\], PT, P\d$"],
}
FORMS_SM90 = {
    "register member mask": [r"^WARPSYNC\.EXCLUSIVE R\d+$"],
    "64-bit bound": [r"^ISETP\.GE\.U32\.AND\.EX P\d, PT, R\d+, UR\d+, PT, P\d$"],
}
KERNELS = ["warp_sum_active", "tile_ballot", "spin_wait", "spin_acquire", "grid_barrier", "u64_compare", "u64_loop",
           "atomic_loops", "predicated_stores", "shfl_loaded_mask", "shared_atomic_loop", "param_compares"]


def _forms(arch):
    return {**FORMS, **(FORMS_SM86 if arch == "sm_86" else FORMS_SM90)}


def _rows(arch):
    patterns = [p for group in _forms(arch).values() for p in group]
    return [r for r in read_corpus(arch) if r.reference.split(":")[0] == PTX.name
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
    rows = [r for r in _rows(arch) if " BRA." not in r.text]   # branches: their offsets need the whole kernel
    assembles_and_decodes_back(rows, arch)


@pytest.mark.parametrize("arch", ["sm_86", "sm_90"])
@pytest.mark.parametrize("kernel", KERNELS)
def test_kernel_assembles_to_ptxas_text(arch, kernel, tmp_path, needs_ptxas, needs_nvdisasm):
    ptxas_image, bobc_image = corpus_images(arch, kernel, tmp_path, PTX, "sm_90a" if arch == "sm_90" else None)
    assert _text(bobc_image, kernel) == _text(ptxas_image, kernel)


def _word(text: str, arch: str) -> int:
    return int.from_bytes(assemble(f"{text}\nEXIT\n", arch).code[:16], "little")


def test_branch_on_a_uniform_register_fields():
    """sm_86's BRA.CONV / BRA.DIV with a uniform register: the register at 24..29 (ptxas 13's @!P0 BRA.CONV UR6 is
    0x...3306008947, @!P1 BRA.DIV UR4 0x...e204009947), the target where BRA's is."""
    code = "@!P0 BRA.CONV UR6, `(L)\n@!P1 BRA.DIV UR4, `(L)\nL:\nEXIT\n"
    words = assemble(code, "sm_86").code
    conv, div = (int.from_bytes(words[i:i + 16], "little") for i in (0, 16))
    assert conv >> 24 & 0x3F == 6 and div >> 24 & 0x3F == 4
    assert _word("@!P0 BRA.CONV UR9, `(L)\nL:", "sm_86") ^ _word("@!P0 BRA.CONV UR6, `(L)\nL:", "sm_86") == (9 ^ 6) << 24


def test_r2ur_predicate_is_bit_81():
    """R2UR P1, URZ, R9 and R2UR P0, URZ, R9 differ in Pu's field at 81 alone (ptxas 13's sm_86 words
    0x...00000000093f73c2 with hi 0x...20000 for P1)."""
    assert _word("R2UR P1, URZ, R9", "sm_86") ^ _word("R2UR P0, URZ, R9", "sm_86") == 1 << 81


def test_usel_and_uisetp_ex_need_their_slots():
    """USEL is the uniform SEL: a vector register there is refused; UISETP.EX takes the low words' predicate last."""
    with pytest.raises(BobcError):
        _word("USEL R4, URZ, 0x1, UP1", "sm_86")
    assert _word("UISETP.GE.U32.AND.EX UP1, UPT, UR5, UR9, UPT, UP2", "sm_86") ^ \
        _word("UISETP.GE.U32.AND.EX UP1, UPT, UR5, UR9, UPT, UP1", "sm_86") == (2 ^ 1) << 68
