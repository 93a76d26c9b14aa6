"""More ordinary PTX math whose SASS the assembler refused (tools/ptx_corpus/math_forms2.ptx, probe s37
sassforms3 items 3-8, 10, 12): prmt's byte-select modes (PRMT.F4E / .B4E / .RC8 / .ECL / .ECR / .RC16),
FFMA.SAT / FFMA.FTZ.SAT (fma.rn.sat), FSETP.XOR (xor.pred of two compares), DSETP.GE (setp.ltu.f64),
FMNMX.XORSIGN / FMNMX.FTZ.NAN, F2F.*.RZ / F2F.F16.F64, F2I.S16 / .U32.F64 / .U64.F64 / .S64 / .F16, I2F.F16,
FRND.F16, F2FP.RELU, MUFU.RCP64H and the packed-half HFMA2.RELU / .SAT / .BF16_V2, HMNMX2.NAN / .BF16_V2.
With the pinned ptxas and nvdisasm:
- ptxas writes each of these forms for math_forms2.ptx, on both targets ("no sm_86 encoding for
  'PRMT.F4E R,R,R,R'" and the like before);
- each ptxas word assembles from nvdisasm's text to the same 128 bits, and nvdisasm reads it back;
- each kernel: ptxas's cubin -> nvdisasm -> `bobc asm --cubin` gives ptxas's .text;
- byte_permutes, ptxas's cubin and bobc's, runs in the simulator to PTX prmt's table (computed here).
"""
from __future__ import annotations

import re

import numpy as np
import pytest

from bobc.sass.learn import PTX_CORPUS, read_corpus
from tests.sass.test_math_forms import _images as corpus_images
from tests.sass.test_math_forms import _text
from tests.sass.test_sim_probe_s37_sassforms3 import PRMT_TABLE   # PTX prmt's mode table, the ISA's
from tests.sass.test_subword_constant_loads import assembles_and_decodes_back

ARCHES = ("sm_86", "sm_90")
PTX = PTX_CORPUS / "math_forms2.ptx"
FORMS = {
    "PRMT modes": [rf"^PRMT\.{m} R\d+, " for m in ("F4E", "B4E", "RC8", "ECL", "ECR", "RC16")],
    "FFMA.SAT": [r"^FFMA\.SAT R", r"^FFMA\.FTZ\.SAT R"],
    "FSETP.XOR": [r"^FSETP\.\w+\.XOR P"],
    "DSETP.GE": [r"^DSETP\.GE\.AND P"],
    "FMNMX": [r"^FMNMX\.XORSIGN R\d+, \|R", r"^FMNMX\.FTZ\.NAN R"],
    "F2F": [r"^F2F\.F16\.F32\.RZ R", r"^F2F\.F32\.F64\.RZ R", r"^F2F\.F16\.F64 R"],
    "F2I": [r"^F2I\.S16\.TRUNC\.NTZ R", r"^F2I\.U32\.F64\.TRUNC R", r"^F2I\.U64\.F64\.TRUNC R", r"^F2I\.S64 R",
            r"^F2I\.F16\.TRUNC\.NTZ R"],
    "I2F.F16 / FRND.F16": [r"^I2F\.F16 R", r"^FRND\.F16 R"],
    "F2FP.RELU": [r"^F2FP\.RELU\.(F16\.F32\.)?PACK_AB R"],
    "MUFU.RCP64H": [r"^MUFU\.RCP64H R"],
    "HFMA2": [r"^HFMA2(\.MMA)?\.RELU R", r"^HFMA2\.SAT R", r"^HFMA2(\.MMA)?\.BF16_V2 R", r"^HFMA2\.BF16_V2\.RELU R"],
    "HMNMX2": [r"^HMNMX2\.NAN R", r"^HMNMX2\.BF16_V2 R"],
}
PATTERNS = [p for group in FORMS.values() for p in group]


def _rows(arch):
    return [r for r in read_corpus(arch) if r.reference.startswith("math_forms2.ptx")
            and any(re.match(p, r.text) for p in PATTERNS)]


@pytest.mark.parametrize("arch", ARCHES)
def test_ptxas_writes_these_forms(arch):
    texts = [r.text for r in _rows(arch)]
    for name, patterns in FORMS.items():
        for pattern in patterns:
            assert any(re.match(pattern, t) for t in texts), f"{arch}: no {name} ({pattern}) in ptxas's math_forms2.ptx"


@pytest.mark.parametrize("arch", ARCHES)
def test_each_ptxas_word_assembles_and_decodes_back(arch, needs_nvdisasm):
    assembles_and_decodes_back(_rows(arch), arch)


def _images(arch: str, kernel: str, folder) -> tuple[bytes, bytes]:
    """(ptxas's cubin of math_forms2.ptx, bobc's cubin of `kernel` from nvdisasm's listing of it)."""
    return corpus_images(arch, kernel, folder, PTX)


@pytest.mark.parametrize("arch", ARCHES)
@pytest.mark.parametrize("kernel", ["byte_permutes", "float_forms2", "half_forms2"])
def test_kernel_assembles_to_ptxas_text(arch, kernel, tmp_path, needs_ptxas, needs_nvdisasm):
    ptxas_image, bobc_image = _images(arch, kernel, tmp_path)
    assert _text(bobc_image, kernel) == _text(ptxas_image, kernel)


THREADS = 32
A = np.array([0x03020100, 0x12345678, 0xDEADBEEF, 0xFFFFFFFF, 0, 0x80FF7F01] * 5 + [7, 0x01020304], dtype=np.uint32)
B = np.roll(A, 3) ^ np.uint32(0x5A5A5A5A)
C = np.arange(THREADS, dtype=np.uint32) * np.uint32(0x01010101) + np.uint32(0xFFFFFFFC)   # every c[1:0], upper bits set


def _prmt(a: int, b: int, c: int, mode: str) -> int:
    source = (b << 32 | a).to_bytes(8, "little")
    return int.from_bytes(bytes(source[k] for k in PRMT_TABLE[mode][c & 3]), "little")


@pytest.mark.parametrize("arch", ARCHES)
def test_byte_permutes_run_to_the_ptx_table(arch, tmp_path, needs_ptxas, needs_nvdisasm):
    from bobc.sim.kernel import run_kernel
    want = np.zeros((THREADS, 8), np.uint32)
    for i, (a, b, c) in enumerate(zip(A.tolist(), B.tolist(), C.tolist())):
        want[i, :6] = [_prmt(a, b, c, m) for m in ("f4e", "b4e", "rc8", "ecl", "ecr", "rc16")]
    for image in _images(arch, "byte_permutes", tmp_path):
        got = run_kernel(image, arch, grid=1, block=THREADS, params=["out", "in", np.uint32(THREADS)],
                         buffers={"out": np.zeros_like(want), "in": np.concatenate([A, B, C])},
                         kernel_name="byte_permutes")["out"]
        assert got.tobytes() == want.tobytes(), f"{arch}:\n{got}\n!=\n{want}"


def test_a_borrowed_form_the_other_target_decodes_otherwise_is_dropped(needs_nvdisasm):
    """sm_90's HFMA2.MMA.BF16_V2 (fma.rn.bf16x2) agreed with every shared HFMA2 form, so learn.borrow copied
    it to sm_86, where nvdisasm reads its word as HFMA2.MMA (a different instruction): learn.prove_borrowed
    drops it; a borrowed form sm_86 reads back (sm_90's own HFMA2.MMA) stays."""
    import json
    from bobc.sass.learn import TABLES, prove_borrowed
    sm90 = json.loads((TABLES / "sm_90.json").read_text())["forms"]
    forms = {key: dict(sm90[key], borrowed_from="sm_90") for key in ("HFMA2.MMA.BF16_V2 R,R,R,R", "HFMA2.MMA R,R,R,R")}
    dropped = prove_borrowed("sm_86", forms)
    assert list(forms) == ["HFMA2.MMA R,R,R,R"]
    assert len(dropped) == 1 and "nvdisasm reads 'HFMA2.MMA R" in dropped[0]
