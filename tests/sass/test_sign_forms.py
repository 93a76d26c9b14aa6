"""PLOP3's register form: `PLOP3.LUT P0, PT, R2.SIGN, R5.SIGN, R4.SIGN, 0x2, 0x0`, each source a register's
sign bit (bit 31), which ptxas writes for add.sat.s32 / sub.sat.s32 / mad.hi.sat.s32 (probe s38 sassforms5
finding 7: the simulator read it, the assembler refused `R2.SIGN` as an operand it cannot read).  It is
another opcode word than the predicate form (0x21f, not 0x81c): A, B, C at the register fields 24, 32, 64
with their reuse bits 122..124, the LUT whole at 72..79 (tables/layouts.py "Rsa Rsb Rsc Ilut").
tools/ptx_corpus/sign_forms.ptx, both targets, with the pinned ptxas and nvdisasm:
- ptxas writes the form (with `.reuse` on sm_90: `R5.reuse.SIGN`);
- each ptxas word assembles from nvdisasm's text to the same 128 bits, and nvdisasm reads it back;
- the kernel's listing assembles to ptxas's .text, and both cubins run in the simulator to the PTX ISA's
  .sat clamp (Python integers);
- `.SIGN` anywhere else, and a PLOP3 register source without it, are refused by name.
"""
from __future__ import annotations

import re

import numpy as np
import pytest

from bobc.errors import BobcError
from bobc.sass import assemble
from bobc.sass.learn import PTX_CORPUS, read_corpus
from tests.sass.test_math_forms import _images as corpus_images
from tests.sass.test_math_forms import _text
from tests.sass.test_sim_probe_s37_sassforms3 import A, B, C, THREADS
from tests.sass.test_subword_constant_loads import assembles_and_decodes_back

ARCHES = ("sm_86", "sm_90")
PTX = PTX_CORPUS / "sign_forms.ptx"
SIGN_FORM = re.compile(r"^PLOP3\.LUT P\d, P[\dT], R\d+(\.reuse)?\.SIGN, R\d+(\.reuse)?\.SIGN, R\d+(\.reuse)?\.SIGN, ")


def _rows(arch):
    return [r for r in read_corpus(arch) if r.reference.startswith("sign_forms.ptx:") and SIGN_FORM.match(r.text)]


@pytest.mark.parametrize("arch", ARCHES)
def test_ptxas_writes_the_register_form(arch):
    texts = [r.text for r in _rows(arch)]
    assert texts, f"{arch}: ptxas no longer writes PLOP3 with .SIGN sources for sign_forms.ptx"
    if arch == "sm_90":
        assert any(".reuse.SIGN" in t for t in texts)


@pytest.mark.parametrize("arch", ARCHES)
def test_each_ptxas_word_assembles_and_decodes_back(arch, needs_nvdisasm):
    assembles_and_decodes_back(_rows(arch), arch)


@pytest.mark.parametrize("arch", ARCHES)
def test_kernel_assembles_to_ptxas_text_and_runs_to_the_sat_clamp(arch, tmp_path, needs_ptxas, needs_nvdisasm):
    from bobc.sim.kernel import run_kernel
    ptxas_image, bobc_image = corpus_images(arch, "saturating_s32", tmp_path, PTX)
    assert _text(bobc_image, "saturating_s32") == _text(ptxas_image, "saturating_s32")

    def s(v):
        return v - (1 << 32) if v >> 31 else v

    def sat(v):
        return max(-(1 << 31), min((1 << 31) - 1, v)) & 0xFFFFFFFF

    want = []
    for a, b, c in zip(A, B, C):
        a, b, c = s(int(a)), s(int(b)), s(int(c))
        add = sat(a + b)
        want.append((add, sat(a - b), sat(((a * b) >> 32) + c), sat(s(add) + c)))
    for image in (ptxas_image, bobc_image):
        out = run_kernel(image, arch, grid=1, block=THREADS, params=["out", "in", np.uint32(THREADS)],
                         buffers={"out": np.zeros(4 * THREADS, np.uint32), "in": np.concatenate([A, B, C])},
                         kernel_name="saturating_s32")["out"]
        assert [tuple(int(x) for x in out[4 * i:4 * i + 4]) for i in range(THREADS)] == want, arch


@pytest.mark.parametrize("arch", ARCHES)
@pytest.mark.parametrize("text, message", [
    ("IADD3 R0, R2.SIGN, R3, RZ", "IADD3 takes no '.SIGN' here: a register's sign bit is a source of PLOP3's "
                                  "register form alone"),
    ("PLOP3.LUT P0, PT, R2.SIGN, R5, R4.SIGN, 0x2, 0x0", "PLOP3's register form reads each register's sign bit: "
                                                         "write R5.SIGN"),
    ("PLOP3.LUT P0, PT, R2.SIGN, P1, R4.SIGN, 0x2, 0x0", "encoding for 'PLOP3.LUT P,P,R,P,R,I,I'"),
    ("PLOP3.LUT P0, PT, -R2.SIGN, R5.SIGN, R4.SIGN, 0x2, 0x0",
     "cannot read operand '-R2.SIGN' of PLOP3.LUT: register R2 with the suffix .SIGN: a register's sign bit"),
])
def test_sign_elsewhere_is_refused_by_name(arch, text, message):
    with pytest.raises(BobcError) as caught:
        assemble(f"{text}\nEXIT\n", arch)
    assert message in caught.value.message, caught.value.message
