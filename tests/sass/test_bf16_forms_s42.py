"""bfloat16 arithmetic in the assembler (probe s42 bf16arith): tools/ptx_corpus/bf16_forms.ptx (both targets) and
sm90_bf16_forms.ptx (sm_90: add / sub / mul .bf16 and .bf16x2, which ptxas refuses for sm_86), one kernel a
PTX instruction, out[t] = op(a[t], b[t], c[t]).  With the pinned ptxas and nvdisasm:
- ptxas writes HFMA2(.MMA).BF16_V2(.RELU), HADD2 / HMUL2.BF16_V2, HMNMX2.BF16_V2(.NAN / .XORSIGN) -- forms the
  assembler refused (HADD2/HMUL2.BF16_V2, -R / |R| on HFMA2's C, the R,R,I,R pair, .NAN, .XORSIGN);
- each word assembles to ptxas's 128 bits and nvdisasm reads it back; each listing assembles to ptxas's .text.
"""
from __future__ import annotations

import re

import pytest

from bobc.sass.learn import PTX_CORPUS, read_corpus
from tests.sass.test_math_forms import _images as corpus_images
from tests.sass.test_math_forms import _text
from tests.sass.test_subword_constant_loads import assembles_and_decodes_back

BOTH = PTX_CORPUS / "bf16_forms.ptx"
SM90 = PTX_CORPUS / "sm90_bf16_forms.ptx"
ARCHES = ("sm_86", "sm_90")
FORMS = re.compile(r"^(HFMA2|HADD2|HMUL2|HMNMX2)\S*\.BF16_V2")


def kernels(ptx) -> list[str]:
    return re.findall(r"\.visible \.entry (\w+)\(", ptx.read_text())


def _rows(arch):
    names = ("bf16_forms.ptx:", "sm90_bf16_forms.ptx:")
    return [r for r in read_corpus(arch) if r.reference.startswith(names) and FORMS.match(r.text)]


@pytest.mark.parametrize("arch", ARCHES)
def test_ptxas_writes_the_forms(arch):
    texts = {r.text.split(" ")[0] for r in _rows(arch)}
    want = {"HFMA2.BF16_V2", "HFMA2.BF16_V2.RELU", "HMNMX2.BF16_V2", "HMNMX2.BF16_V2.NAN", "HMNMX2.BF16_V2.XORSIGN"}
    if arch == "sm_90":
        want |= {"HFMA2.MMA.BF16_V2", "HFMA2.MMA.BF16_V2.RELU", "HADD2.BF16_V2", "HMUL2.BF16_V2"}
    assert want <= texts, want - texts


@pytest.mark.parametrize("arch", ARCHES)
def test_each_ptxas_word_assembles_and_decodes_back(arch, needs_nvdisasm):
    assembles_and_decodes_back(_rows(arch), arch)


LISTINGS = [(arch, BOTH, k) for arch in ARCHES for k in kernels(BOTH)] + [("sm_90", SM90, k) for k in kernels(SM90)]


@pytest.mark.parametrize("arch, ptx, kernel", LISTINGS, ids=[f"{a}-{k}" for a, _, k in LISTINGS])
def test_kernel_assembles_to_ptxas_text(arch, ptx, kernel, tmp_path, needs_ptxas, needs_nvdisasm):
    ptxas_image, bobc_image = corpus_images(arch, kernel, tmp_path, ptx, "sm_90a" if ptx == SM90 else None)
    assert _text(bobc_image, kernel) == _text(ptxas_image, kernel)
