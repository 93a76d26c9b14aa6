"""Sub-word constant loads: LDC / ULDC .U8 / .S8 / .U16 / .S16, ptxas's reads of a kernel's .u8 / .s8 /
.u16 / .s16 / .f16 / .b8-array parameter (tools/ptx_corpus/subword_params.ptx).

ptxas 13 emits, on sm_86 and sm_90 alike: at -O3 ULDC.U8 / ULDC.S8 / ULDC.U16 (a value uniform
arithmetic takes) and LDC.U8 / LDC.S8 / LDC.U16 at c[0x0][imm] (a value a thread's register takes;
a .s16 is read as .U16 and sign-extended by PRMT 0x9910, so neither ULDC.S16 nor an immediate
LDC.S16 appears); at -O0 LDC.U8 / .S8 / .U16 / .S16 through c[0x0][Rn+base].  Here, with the pinned
ptxas and nvdisasm:
- each of those ptxas words assembles from nvdisasm's text to the same 128 bits (control code
  included), and nvdisasm reads bobc's word back as that text;
- a load's offset is a multiple of its size (1, 2), not of 4, and nothing else's is;
- the scheduler treats them as it treats LDC / ULDC: ptxas gives every LDC.<sub> a write scoreboard
  and no ULDC.<sub> one, and so does the scheduler;
- a whole kernel: ptxas's cubin -> nvdisasm -> `bobc asm --cubin` gives ptxas's .text, and the
  simulator runs both cubins (and the -O0 one) to the stores PTX's ld.param semantics give.
"""
from __future__ import annotations

import functools
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
from bobc.sass.syntax import Control, parse_instruction
from bobc.sass.tables.arch import encoding_of
from bobc.sass.tables.layouts import DESCRIPTOR_OPCODES
from bobc.targets import TARGETS

ARCHES = ("sm_86", "sm_90")
SUBWORD = re.compile(r"^(U?LDC)\.([US](?:8|16))\b")
# what ptxas 13 writes for tools/ptx_corpus/subword_params.ptx (checked against the corpus below)
EMITTED = {"LDC.U8", "LDC.S8", "LDC.U16", "LDC.S16", "ULDC.U8", "ULDC.S8", "ULDC.U16"}


def _rows(arch):
    return [r for r in read_corpus(arch) if SUBWORD.match(r.text)]


@pytest.mark.parametrize("arch", ARCHES)
def test_ptxas_emits_these_forms(arch):
    """The corpus (ptxas's own output) holds exactly these sub-word loads, each at -O3 or -O0."""
    seen = {SUBWORD.match(r.text).group(0) for r in _rows(arch)}
    assert seen == EMITTED


@pytest.mark.parametrize("arch", ARCHES)
def test_each_ptxas_word_assembles_and_decodes_back(arch, needs_nvdisasm):
    assembles_and_decodes_back(_rows(arch), arch)


def _hidden_descriptor(row, arch: str) -> str:
    """The `ULDC.64 URn, c[0x0][<memory descriptor>]` a global access's word depends on where nvdisasm's text hides
    the descriptor (sm_86: desc[URn] is not printed, and ptxas loads the descriptor into UR4 or UR6 by kernel), as
    the last such ULDC.64 before the row in its kernel (the corpus holds every instruction of a kernel), or "" for
    none: the assembler takes the descriptor from that ULDC.64 as it does in a whole listing."""
    if encoding_of(arch).shows_descriptor or parse_instruction(row.text).opcode not in DESCRIPTOR_OPCODES:
        return ""
    load = f"ULDC.64 UR{{}}, c[0x0][{TARGETS[arch].memory_descriptor:#x}]"
    before = [r for r in _kernel_rows(arch).get(row.stream, ()) if r.offset < row.offset
              and re.fullmatch(r"ULDC\.64 UR(\d+), c\[0x0\]\[0x[0-9a-f]+\]", r.text)
              and r.text.endswith(f"[{TARGETS[arch].memory_descriptor:#x}]")]
    return f"{load.format(before[-1].text.split()[1][2:-1])} ;\n" if before else ""


@functools.cache
def _kernel_rows(arch: str) -> dict:
    kernels: dict = {}
    for r in read_corpus(arch):
        kernels.setdefault(r.stream, []).append(r)
    return kernels


def assembles_and_decodes_back(rows, arch: str) -> None:
    """Each ptxas row's text assembles alone to ptxas's 128 bits, and nvdisasm reads them back
    as the same texts (tests/sass/test_param_shapes.py's rows too).  A global access on a target whose text
    hides the memory descriptor is assembled after its kernel's descriptor load (_hidden_descriptor)."""
    assert rows
    words = []
    for row in rows:
        control = Control.from_word(row.word >> 64)._replace_reuse()     # reuse: from the text
        context = _hidden_descriptor(row, arch)
        code = f"{context}{control.text()} {row.text} ;\nEXIT ;\n"
        at = 16 * context.count("\n")
        word = int.from_bytes(assemble(code, arch).code[at:at + 16], "little")
        assert word == row.word, f"{row.reference}: {row.text}: {word:#034x} != ptxas {row.word:#034x}"
        words.append(word)
    listed = disassemble(b"".join(w.to_bytes(16, "little") for w in words), TARGETS[arch].nvdisasm_arch)
    assert not listed.errors
    assert [d.text for d in listed.lines] == [r.text for r in rows]


@pytest.mark.parametrize("arch", ARCHES)
def test_offsets_are_multiples_of_the_size(arch):
    for text in ("LDC.U8 R0, c[0x0][0x16b]", "LDC.S8 R0, c[0x0][0x16b]", "LDC.U16 R0, c[0x0][0x16a]",
                 "ULDC.U8 UR4, c[0x0][0x16b]", "ULDC.S8 UR4, c[0x0][0x16b]", "ULDC.U16 UR4, c[0x0][0x16e]",
                 "LDC.S16 R0, c[0x0][R2+0x162]"):
        assemble(f"{text}\nEXIT\n", arch)
    for text, size in (("LDC.U16 R0, c[0x0][0x16b]", 2), ("ULDC.U16 UR4, c[0x0][0x169]", 2),
                       ("LDC.S16 R0, c[0x0][R2+0x161]", 2)):
        with pytest.raises(BobcError, match=f"reads {size} bytes: its offset must be a multiple of {size}"):
            assemble(f"{text}\nEXIT\n", arch)
    for text in ("LDC R0, c[0x0][0x16a]", "ULDC UR4, c[0x0][0x16b]", "IADD3 R0, R1, c[0x0][0x16a], RZ"):
        with pytest.raises(BobcError, match="not a multiple of 4"):   # a word's read, another opcode's
            assemble(f"{text}\nEXIT\n", arch)


@pytest.mark.parametrize("arch", ARCHES)
def test_ptxas_control_codes_are_those_of_ldc_and_uldc(arch):
    """ptxas -O3: every LDC.<sub> sets a write scoreboard (0..4), no ULDC.<sub> does, as for its LDC /
    ULDC.  (-O0 code is not scheduled so: its loads, LDC.64 included, have none.)"""
    for row in read_corpus(arch):
        m = SUBWORD.match(row.text)
        if ":-O3:" not in row.reference or not m:
            continue
        if not m:
            continue
        write = Control.from_word(row.word >> 64).write_barrier
        assert (write != 7) == (m.group(1) == "LDC"), f"{row.reference}: {row.text}"


@pytest.mark.parametrize("arch", ARCHES)
@pytest.mark.parametrize("pair", [("LDC.U8", "LDC", "R3"), ("LDC.S16", "LDC", "R3"),
                                  ("ULDC.U8", "ULDC", "UR6"), ("ULDC.S8", "ULDC", "UR6"),
                                  ("ULDC.U16", "ULDC", "UR6")])
def test_scheduler_treats_them_as_ldc_and_uldc(arch, pair):
    """The same program with LDC.U8 / ULDC.U16 ... in place of LDC / ULDC (at a word's offset) gets
    the same control codes; LDC.<sub> has a write scoreboard its reader waits on, ULDC.<sub> none."""
    sub, whole, dest = pair
    text = """S2R R0, SR_TID.X
    {op} {dest}, c[0x0][param+0x8]
    ULDC.64 UR4, c[0x0][memory_descriptor]
    LDC.64 R4, c[0x0][param+0x0]
    IADD3 R6, R0, {dest}, RZ
    STG.E [R4.64], R6
    EXIT
"""
    ours = assemble(text.format(op=sub, dest=dest), arch).instructions
    theirs = assemble(text.format(op=whole, dest=dest), arch).instructions
    assert [i.control for i in ours] == [i.control for i in theirs]
    load, reader = ours[1].control, ours[4].control
    if whole == "LDC":
        assert load.write_barrier != 7 and reader.wait_mask >> load.write_barrier & 1
    else:
        assert load.write_barrier == 7


# ---- whole kernels: ptxas's cubin, nvdisasm, bobc asm --cubin, the simulator ----------------------

PTX = """.version 8.8
.target {arch}
.address_size 64
.visible .entry params(
    .param .u64 out,
    .param .u8 a,
    .param .s8 b,
    .param .u16 c,
    .param .u16 pad,
    .param .s16 d,
    .param .u8 e,
    .param .s8 f,
    .param .align 1 .b8 g[3],
    .param .s16 h,
    .param .u8 j,
    .param .u8 i,
    .param .u16 l
)
{{
    .reg .b32 %r<24>;
    .reg .b64 %rd<8>;
    ld.param.u64 %rd1, [out];
    cvta.to.global.u64 %rd2, %rd1;
    mov.u32 %r20, %tid.x;
    mul.wide.u32 %rd3, %r20, 52;
    add.s64 %rd2, %rd2, %rd3;
    ld.param.u8 %r1, [a];
    ld.param.s8 %r2, [b];
    ld.param.u16 %r3, [c];
    ld.param.s16 %r4, [d];
    ld.param.u8 %r5, [e];
    ld.param.s8 %r6, [f];
    ld.param.u8 %r7, [g+1];
    ld.param.s8 %r8, [g+2];
    ld.param.s16 %r9, [h];
    st.global.u32 [%rd2], %r1;
    st.global.u32 [%rd2+4], %r2;
    st.global.u32 [%rd2+8], %r3;
    st.global.u32 [%rd2+12], %r4;
    st.global.u32 [%rd2+16], %r5;
    st.global.u32 [%rd2+20], %r6;
    st.global.u32 [%rd2+24], %r7;
    st.global.u32 [%rd2+28], %r8;
    st.global.u32 [%rd2+32], %r9;
    ld.param.u8 %r14, [i];
    ld.param.u8 %r15, [j];
    ld.param.u16 %r16, [l];
    add.s32 %r10, %r1, %r20;
    mul.lo.s32 %r11, %r14, %r20;
    mul.lo.s32 %r12, %r15, %r20;
    mul.lo.s32 %r13, %r16, %r20;
    st.global.u32 [%rd2+36], %r10;
    st.global.u32 [%rd2+40], %r11;
    st.global.u32 [%rd2+44], %r12;
    st.global.u32 [%rd2+48], %r13;
    ret;
}}
"""
# (no .s8 / .s16 only uniform arithmetic takes: ptxas sign-extends those with UPRMT,
# tests/sass/test_param_shapes.py)
# (PTX type, offset in the block): .u64 at 0, then the sub-word parameters as PTX lays them out
LAYOUT = [("u8", 8), ("s8", 9), ("u16", 10), ("u16", 12), ("s16", 14), ("u8", 16), ("s8", 17),
          ("b8", 18), ("b8", 19), ("b8", 20), ("s16", 22), ("u8", 24), ("u8", 25), ("u16", 26)]
BLOCK = 28
THREADS = 4


def _values(seed: int) -> list[int]:
    """Edge values: the sign bit set (0x80, 0x8000), all ones, the largest positive."""
    sets = [[0x80, 0x80, 0x8000, 0x1234, 0x8000, 0xff, 0xff, 0x11, 0x80, 0xff, 0xffff, 0x80, 0x80, 0x8000],
            [0x7f, 0x7f, 0xffff, 0, 0x7fff, 0x01, 0x7f, 0x22, 0x7f, 0x80, 0x8001, 0xff, 0xff, 0xffff],
            [0xff, 0xfe, 0x00ff, 0xffff, 0xff80, 0x00, 0x00, 0x33, 0xff, 0x7f, 0x7fff, 0x7f, 0x7f, 0x7fff]]
    return sets[seed]


def _block(values: list[int], address: int) -> bytes:
    block = bytearray(BLOCK)
    block[0:8] = address.to_bytes(8, "little")
    for (kind, at), value in zip(LAYOUT, values):
        size = 2 if kind.endswith("16") else 1
        block[at:at + size] = value.to_bytes(size, "little")
    return bytes(block)


def _expected(values: list[int]) -> np.ndarray:
    """PTX's semantics: ld.param.u8/.u16 zero-extends to the .b32 register, .s8/.s16 sign-extends."""
    def u(x):
        return x & 0xffffffff

    def s(x, bits):
        return x - (1 << bits) if x >> (bits - 1) & 1 else x
    a, b, c, _, d, e, f, _, g1, g2, h, j, i, k = values
    rows = []
    for tid in range(THREADS):
        r = [a, s(b, 8), c, s(d, 16), e, s(f, 8), g1, s(g2, 8), s(h, 16),
             a + tid, i * tid, j * tid, k * tid]
        rows.append([u(x) for x in r])
    return np.array(rows, dtype=np.uint32)


def _ptxas_cubin(tmp_path, arch: str, opt: str):
    source, cubin = tmp_path / f"k.{arch}{opt}.ptx", tmp_path / f"k.{arch}{opt}.cubin"
    source.write_text(PTX.format(arch=arch))
    subprocess.run([ptxas(), f"-arch={arch}", opt, "-o", str(cubin), str(source)], check=True, capture_output=True)
    return cubin


def _text(cubin_bytes: bytes) -> bytes:
    import lief
    lief.logging.disable()
    # a cubin is an ELF file: lief.ELF.parse takes its bytes as a list of ints from lief 0.14 (the
    # floor pyproject.toml admits) on; lief.parse took a list only from 0.17 (None before)
    binary = lief.ELF.parse(list(cubin_bytes))
    return bytes(next(s for s in binary.sections if s.name == ".text.params").content)


def _run(cubin: bytes, arch: str, values: list[int]) -> np.ndarray:
    from bobc.sim.kernel import buffer_addresses, run_kernel
    buffers = {"out": np.zeros((THREADS, 13), np.uint32)}
    block = _block(values, buffer_addresses(buffers)["out"])
    return run_kernel(cubin, arch, grid=1, block=THREADS, params=block, buffers=buffers)["out"]


@pytest.mark.parametrize("arch", ARCHES)
@pytest.mark.parametrize("opt", ["-O3", "-O0"])
def test_whole_kernel_assembles_to_ptxas_text_and_runs(arch, opt, tmp_path, needs_ptxas, needs_nvdisasm):
    cubin = _ptxas_cubin(tmp_path, arch, opt)
    listing = subprocess.run([nvdisasm(), "-hex", str(cubin)], check=True, capture_output=True, text=True).stdout
    if opt == "-O3":   # the kernel does reach the sub-word forms
        assert {"LDC.U8", "LDC.S8", "LDC.U16", "ULDC.U8", "ULDC.U16"} <= set(re.findall(r"\bU?LDC\.[US]\d+", listing)), listing
    else:
        assert {"LDC.U8", "LDC.S8", "LDC.U16", "LDC.S16"} <= set(re.findall(r"\bU?LDC\.[US]\d+", listing)), listing
    source = tmp_path / f"k.{arch}{opt}.sass"
    source.write_text(listing)
    out = tmp_path / f"bobc.{arch}{opt}.cubin"
    assert main(["asm", str(source), "--arch", arch, "--cubin", "-o", str(out)]) == 0
    ptxas_image, bobc_image = cubin.read_bytes(), out.read_bytes()
    assert _text(bobc_image) == _text(ptxas_image)
    for seed in range(3):
        values = _values(seed)
        want = _expected(values)
        for image in (ptxas_image, bobc_image):
            got = _run(image, arch, values)
            assert (got == want).all(), f"values {[hex(v) for v in values]}:\n{got}\n!=\n{want}"


def test_a_hidden_descriptor_comes_from_the_kernels_load_s47(needs_nvdisasm):
    """sm_86's `@!P0 ATOMG.E.ADD.STRONG.GPU PT, R4, [R2.64], R19` (user_forms_s46.ptx atom_ordered) was one bit off
    ptxas alone (..1ee1c4 against ..1ee1c6): its kernel loads the descriptor with `ULDC.64 UR6, c[0x0][0x118]`, the
    text hides desc[UR6], and a lone instruction takes the default UR4 -- the difference is the descriptor field
    (bits 64..69: 4 ^ 6), not an encoding fault; after the kernel's ULDC.64 it is ptxas's word."""
    row = next(r for r in read_corpus("sm_86") if r.reference == "user_forms_s46.ptx:atom_ordered:-O3:0x0090")
    assert row.text == "@!P0 ATOMG.E.ADD.STRONG.GPU PT, R4, [R2.64], R19"
    control = Control.from_word(row.word >> 64)._replace_reuse()
    alone = int.from_bytes(assemble(f"{control.text()} {row.text} ;\nEXIT ;\n", "sm_86").code[:16], "little")
    assert alone ^ row.word == (4 ^ 6) << 64
    assert _hidden_descriptor(row, "sm_86") == "ULDC.64 UR6, c[0x0][0x118] ;\n"
    assembles_and_decodes_back([row], "sm_86")
