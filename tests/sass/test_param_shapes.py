"""ptxas's reads of a uniform .s8 / .s16 and a .f16 kernel parameter (tools/ptx_corpus/param_shapes.ptx):
it sign-extends a .s8 / .s16 that uniform arithmetic takes with UPRMT (0x8880 / 0x9910, PTX's
ld.param.s8 / .s16 into a .b32 register) and converts a .f16 to .f32 with
`HADD2.F32 R, -RZ, c[0x0] [imm].H0_H0` (a lane selection on a constant; on sm_90 ptxas also writes a
packed-half opcode's uniform source with one, `HADD2 R2, R4.H0_H0, UR4.H0_H0`).  With the pinned
ptxas and nvdisasm:
- each of those ptxas words assembles from nvdisasm's text to the same 128 bits, and nvdisasm reads
  bobc's word back as that text;
- a lane selection on a constant or uniform register of an opcode that has none is refused;
- a whole kernel: ptxas's cubin -> nvdisasm -> `bobc asm --cubin` gives ptxas's .text, and the
  simulator runs both cubins to the stores PTX's semantics give (computed here with numpy).
"""
from __future__ import annotations

import re
import subprocess

import numpy as np
import pytest

from bobc.cli import main
from bobc.errors import BobcError
from bobc.nvtools import nvdisasm, ptxas
from bobc.sass import assemble
from bobc.sass.learn import read_corpus
from bobc.sass.oracle import disassemble
from bobc.targets import TARGETS
from tests.sass.test_subword_constant_loads import assembles_and_decodes_back

ARCHES = ("sm_86", "sm_90")
FORMS = re.compile(r"^(UPRMT\b|HADD2\.F32 R\d+, -RZ, c\[0x0\] \[0x[0-9a-f]+\]\.H[01]_H[01]$|"
                   r"(HADD2|HMUL2|HFMA2|HMNMX2)\b.*\bUR\d+\.H[01]_H[01])")


def _rows(arch):
    return [r for r in read_corpus(arch) if FORMS.match(r.text) and r.reference.startswith("param_shapes.ptx")]


def test_ptxas_emits_these_forms():
    """The corpus (ptxas's own output) holds both forms on both targets: the UPRMT selectors of a
    .s8 and a .s16 (0x8880, 0x9910), and the .f16 read through a constant with a lane selection."""
    for arch in ARCHES:
        texts = [r.text for r in _rows(arch)]
        assert any(t.startswith("UPRMT") and ", 0x9910," in t for t in texts), arch
        assert any(t.startswith("HADD2.F32") for t in texts) or arch == "sm_90", arch
    assert any(", 0x8880," in r.text for a in ARCHES for r in _rows(a))
    assert any(".H0_H0" in r.text and "UR" in r.text for r in _rows("sm_90"))


@pytest.mark.parametrize("arch", ARCHES)
def test_each_ptxas_word_assembles_and_decodes_back(arch, needs_nvdisasm):
    assembles_and_decodes_back(_rows(arch), arch)


@pytest.mark.parametrize("arch", ARCHES)
def test_lane_selection_where_the_opcode_has_none_is_refused(arch):
    for text in ("IADD3 R0, R1, c[0x0][0x160].H0_H0, RZ", "FADD R0, R1, c[0x0][0x160].H1_H1",
                 "IADD3 R0, R1, UR4.H0_H0, RZ"):
        with pytest.raises(BobcError, match=r"lane selection \.H[01]_H[01] is not available"):
            assemble(f"{text}\nEXIT\n", arch)
    with pytest.raises(BobcError, match="takes none"):
        assemble("HADD2.F32 R0, -RZ, c[0x0][0x160].reuse\nEXIT\n", arch)
    # the selection is the constant's own: H1_H1 is another word than H0_H0, and nvdisasm says so
    words = [assemble(f"HADD2.F32 R0, -RZ, c[0x0] [0x160].{lane}\nEXIT\n", arch).code[:16] for lane in ("H0_H0", "H1_H1")]
    assert words[0] != words[1]
    listed = disassemble(b"".join(words), TARGETS[arch].nvdisasm_arch)
    assert [d.text for d in listed.lines] == [f"HADD2.F32 R0, -RZ, c[0x0] [0x160].{lane}" for lane in ("H0_H0", "H1_H1")]


PTX = """.version 8.8
.target {arch}
.address_size 64
.visible .entry shapes(.param .u64 out, .param .s8 a, .param .s16 b, .param .f16 h, .param .s8 c)
{{
    .reg .b32 %r<16>; .reg .b16 %h<4>; .reg .f32 %f<8>; .reg .b64 %rd<4>;
    ld.param.u64 %rd1, [out]; cvta.to.global.u64 %rd2, %rd1;
    mov.u32 %r9, %tid.x;
    mul.wide.u32 %rd3, %r9, 16; add.s64 %rd2, %rd2, %rd3;
    ld.param.s8 %r1, [a]; ld.param.s16 %r2, [b]; ld.param.s8 %r10, [c];
    add.s32 %r3, %r1, %r2;
    mul.lo.s32 %r4, %r3, %r9;
    st.global.u32 [%rd2], %r4;
    mul.lo.s32 %r6, %r2, %r9;
    st.global.u32 [%rd2+4], %r6;
    mul.lo.s32 %r7, %r10, %r9;
    st.global.u32 [%rd2+8], %r7;
    ld.param.b16 %h1, [h];
    cvt.f32.f16 %f1, %h1;
    cvt.rn.f32.u32 %f2, %r9;
    add.f32 %f3, %f1, %f2;
    st.global.f32 [%rd2+12], %f3;
    ret;
}}
"""
THREADS = 4
# (a .s8, b .s16, h .f16 bits, c .s8): the sign bits set and clear, a binary16 subnormal, the largest
VALUES = [(0x80, 0x8000, 0x3e00, 0xff), (0x7f, 0x7fff, 0xb555, 0x01), (0xfe, 0xff80, 0x0001, 0x80),
          (0x00, 0x1234, 0x7bff, 0x7f)]


def _block(values, address: int) -> bytes:
    a, b, h, c = values
    block = bytearray(16)
    block[0:8] = address.to_bytes(8, "little")
    block[8] = a
    block[10:12] = b.to_bytes(2, "little")
    block[12:14] = h.to_bytes(2, "little")
    block[14] = c
    return bytes(block[:15])


def _expected(values) -> np.ndarray:
    """PTX: ld.param.s8 / .s16 sign-extend into the .b32 register; cvt.f32.f16 is exact; the
    products and sums wrap at 32 bits; add.f32 rounds to nearest (numpy's float32)."""
    a, b, h, c = values

    def s(x, bits):
        return x - (1 << bits) if x >> (bits - 1) & 1 else x
    half = float(np.array([h], np.uint16).view(np.float16)[0])
    rows = []
    for tid in range(THREADS):
        f = np.float32(half) + np.float32(tid)
        rows.append([((s(a, 8) + s(b, 16)) * tid) & 0xffffffff, (s(b, 16) * tid) & 0xffffffff,
                     (s(c, 8) * tid) & 0xffffffff, int(np.array([f], np.float32).view(np.uint32)[0])])
    return np.array(rows, dtype=np.uint32)


def _text(cubin_bytes: bytes) -> bytes:
    import lief
    lief.logging.disable()
    # a cubin is an ELF file: lief.ELF.parse takes its bytes as a list of ints from lief 0.14 (the
    # floor pyproject.toml admits) on; lief.parse took a list only from 0.17 (None before)
    binary = lief.ELF.parse(list(cubin_bytes))
    return bytes(next(s for s in binary.sections if s.name == ".text.shapes").content)


@pytest.mark.parametrize("arch", ARCHES)
def test_whole_kernel_assembles_to_ptxas_text_and_runs(arch, tmp_path, needs_ptxas, needs_nvdisasm):
    from bobc.sim.kernel import buffer_addresses, run_kernel
    source, cubin = tmp_path / "k.ptx", tmp_path / "k.cubin"
    source.write_text(PTX.format(arch=arch))
    subprocess.run([ptxas(), f"-arch={arch}", "-O3", "-o", str(cubin), str(source)], check=True, capture_output=True)
    listing = subprocess.run([nvdisasm(), "-hex", str(cubin)], check=True, capture_output=True, text=True).stdout
    # the kernel reaches the forms: ptxas 13 sign-extends the .s16 with UPRMT 0x9910 on both targets
    # (and the first .s8 with UPRMT 0x8880 on sm_90, reading it with ULDC.U8 there), and converts
    # the .f16 from the bank on sm_86 (sm_90 loads it with LDC.U16 first)
    assert re.search(r"UPRMT UR\d+, UR\d+, 0x9910, URZ", listing), listing
    assert re.search({"sm_86": r"HADD2\.F32 R\d+, -RZ, c\[0x0\] \[0x16c\]\.H0_H0",
                      "sm_90": r"UPRMT UR\d+, UR\d+, 0x8880, URZ"}[arch], listing), listing
    written = tmp_path / "k.sass"
    written.write_text(listing)
    out = tmp_path / "bobc.cubin"
    assert main(["asm", str(written), "--arch", arch, "--cubin", "-o", str(out)]) == 0
    ptxas_image, bobc_image = cubin.read_bytes(), out.read_bytes()
    assert _text(bobc_image) == _text(ptxas_image)
    for values in VALUES:
        want = _expected(values)
        for image in (ptxas_image, bobc_image):
            buffers = {"out": np.zeros((THREADS, 4), np.uint32)}
            params = _block(values, buffer_addresses(buffers)["out"])
            got = run_kernel(image, arch, grid=1, block=THREADS, params=params, buffers=buffers)["out"]
            assert (got == want).all(), f"values {[hex(v) for v in values]}:\n{got}\n!=\n{want}"
