"""Probe s43 newuser8: docs/writing-a-plan.md, section 2, promised that "any nvdisasm listing of
ptxas output assembles back to its words".  A new user who compiled a small CUDA softmax classifier
with nvcc -O3 (sm_86 and sm_90) and took nvdisasm's listing as the kernel source was refused on
both targets at forms the encoding tables have not learned (sm_86's UIMAD, LEA.HI.X with a
register B, UIADD3 with a carry out): the assembler's README says it -- a listing "of forms the
tables have" -- and the guide now does too, and names the forms a hand-written kernel can use.

This holds the guide to both halves of what it now says: the forms it names assemble on both
targets, each word decoded back to the same instruction by NVIDIA's nvdisasm (the independent
judge), and it no longer promises every listing."""
from __future__ import annotations

import re
from pathlib import Path

import pytest

from bobc.sass.assembler import assemble
from bobc.sass.oracle import disassemble
from bobc.targets import SM86, SM90

REPO = Path(__file__).resolve().parents[1]
GUIDE = REPO / "docs" / "writing-a-plan.md"

# the forms section 2 names for a hand-written kernel (LinReg's, and MUFU / FSETP / FSEL)
FORMS = [
    "IMAD.WIDE.U32 R16, R18, 0x4, R4",
    "LDG.E R26, [R22.64]",
    "STG.E [R24.64], R10",
    "FMUL R26, R26, R27",
    "FADD R14, R14, -R26",
    "ISETP.GE.U32.AND P2, PT, R15, R21, PT",
    "MUFU.EX2 R58, R58",
    "MUFU.LG2 R60, R46",
    "MUFU.RCP R47, R46",
    "FSETP.GT.AND P2, PT, R58, RZ, PT",
    "FSEL R58, R58, RZ, P2",
]


def section_two() -> str:
    text = GUIDE.read_text()
    return text[text.index("## 2. Kernels"):text.index("## 3.")]


def test_the_guide_does_not_promise_every_ptxas_listing():
    words = " ".join(section_two().split())
    assert "any nvdisasm listing" not in words
    assert "the encoding tables have learned" in words


def test_the_guide_names_each_form_it_lists():
    words = " ".join(section_two().split())
    for form in ("IMAD.WIDE.U32", "LDG.E", "STG.E", "FMUL", "FADD", "ISETP", "MUFU.EX2", "FSETP.GT.AND", "FSEL"):
        assert form in words, form


@pytest.mark.parametrize("target", [SM86, SM90], ids=lambda t: t.name)
def test_the_forms_the_guide_names_assemble_and_nvdisasm_reads_them_back(target):
    source = ("    ULDC.64 UR4, c[0x0][memory_descriptor]\n"
              + "".join(f"    {form}\n" for form in FORMS) + "    EXIT\ndone:\n    BRA done\n")
    assembled = assemble(source, target, "forms.sass")
    decoded = disassemble(assembled.code, target.nvdisasm_arch)
    assert not decoded.errors, decoded.errors
    texts = [re.sub(r"\s+", " ", d.text.replace(".reuse", "")).strip() for d in decoded.lines]
    for form in FORMS:
        # nvdisasm names the global memory descriptor on sm_90 (desc[UR4]); the rest as written
        wanted = form if target is SM86 else form.replace("[R", "desc[UR4][R")
        assert wanted in texts, (form, texts)
