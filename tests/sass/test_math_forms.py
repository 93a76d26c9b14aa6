"""Ordinary PTX math whose SASS the assembler lacked (tools/ptx_corpus/math_forms.ptx, probe s36
sassforms): FRND (cvt.rmi/rni/rzi/rpi to the same float type, .f32 and .f64), IABS (abs.s32), I2I
(cvt.sat.s8/u8/s16/u16.s32), BMSK (bmsk.clamp / .wrap), signed SGXT and SGXT.W (szext, bfe.s32),
the 6-operand ISETP...EX (64-bit setp / min / max), HSETP2 (setp.f16 / .f16x2) and HFMA2 with a
lane selection on C (fma.rn.f16 of two halves of one register).  With the pinned ptxas and nvdisasm:
- ptxas writes each of these forms for math_forms.ptx, on both targets;
- each ptxas word assembles from nvdisasm's text to the same 128 bits, and nvdisasm reads it back;
- each kernel: ptxas's cubin -> nvdisasm -> `bobc asm --cubin` gives ptxas's .text, and the simulator
  runs both cubins to what the PTX ISA's definitions give (computed here with numpy).
"""
from __future__ import annotations

import re
import subprocess
from pathlib import Path

import numpy as np
import pytest

from bobc.cli import main
from bobc.errors import BobcError
from bobc.nvtools import nvdisasm, ptxas
from bobc.sass import assemble
from bobc.sass.learn import PTX_CORPUS, read_corpus
from bobc.sass.oracle import disassemble
from bobc.targets import TARGETS
from tests.sass.test_subword_constant_loads import assembles_and_decodes_back

ARCHES = ("sm_86", "sm_90")
PTX = PTX_CORPUS / "math_forms.ptx"
FORMS = {
    "FRND f32": r"^FRND(\.FLOOR|\.CEIL|\.TRUNC)? R\d+, R\d+$",
    "FRND f64": r"^FRND\.F64(\.FLOOR|\.CEIL|\.TRUNC)? R\d+, R\d+$",
    "IABS": r"^IABS R\d+, R\d+",
    "I2I": r"^I2I\.(S8|U8|S16|U16)\.S32\.SAT ",
    "BMSK": r"^BMSK(\.W)? R\d+, ",
    "signed SGXT": r"^SGXT R\d+, ",
    "SGXT.W": r"^SGXT\.W\.U32 ",
    "ISETP.EX": r"^ISETP\.\w+(\.U32)?\.AND\.EX P\d, P\w+, R\w+(\.reuse)?, R\w+(\.reuse)?, PT, !?P\d$",
    "HSETP2": r"^HSETP2\.\w+\.AND P\d, P\w+, R\d+(\.reuse)?(\.H[01]_H[01])?, R\d+",
    "HFMA2 C lane": r"^HFMA2 R\d+, .*, R\d+(\.reuse)?\.H[01]_H[01]$",
    # wide_products (session 36 sassforms2): a carry-out IMAD.WIDE.U32 with B from the constant bank
    # (sm_86) or a uniform register (sm_90); the forms with registers alone were learned before
    "IMAD.WIDE carry, B not a register": r"^IMAD\.WIDE\.U32 R\d+, P\d, R\d+(\.reuse)?, (c\[|UR)",
}


def _rows(arch):
    return [r for r in read_corpus(arch) if r.reference.startswith("math_forms.ptx")
            and any(re.match(p, r.text) for p in FORMS.values())]


@pytest.mark.parametrize("arch", ARCHES)
def test_ptxas_writes_these_forms(arch):
    texts = [r.text for r in _rows(arch)]
    for name, pattern in FORMS.items():
        assert any(re.match(pattern, t) for t in texts), f"{arch}: no {name} in ptxas's math_forms.ptx"


@pytest.mark.parametrize("arch", ARCHES)
def test_each_ptxas_word_assembles_and_decodes_back(arch, needs_nvdisasm):
    assembles_and_decodes_back(_rows(arch), arch)


@pytest.mark.parametrize("arch", ARCHES)
def test_hfma2_lane_selection_on_c(arch, needs_nvdisasm):
    """C's selection is its own field (81..82): H0_H0 and H1_H1 are two words, nvdisasm reads each back;
    B's register moved to the C field by an immediate pair has no such field and is refused."""
    texts = [f"HFMA2 R4, R0.H0_H0, R5.H0_H0, R0.{lane}" for lane in ("H0_H0", "H1_H1")] + ["HFMA2 R4, R0, R5, R6"]
    words = [assemble(f"{t}\nEXIT\n", arch).code[:16] for t in texts]
    assert len(set(words)) == 3
    listed = disassemble(b"".join(words), TARGETS[arch].nvdisasm_arch)
    assert [d.text for d in listed.lines] == texts
    with pytest.raises(BobcError, match=r"lane selection \.H1_H1 is not available"):
        assemble("HFMA2 R4, R0, R5.H1_H1, 1, 1\nEXIT\n", arch)


@pytest.mark.parametrize("arch", ARCHES)
def test_operand_modifiers_ptxas_did_not_write_decode_back(arch, needs_nvdisasm):
    """The bits the layouts give beyond ptxas's words: ISETP.EX's sixth operand negated (71), HSETP2's
    '-' / '|..|' (FSETP's bits on a packed-half compare) with lane selections, and OR / an input predicate."""
    texts = ["ISETP.LT.U32.AND.EX P3, PT, R3, R7, PT, !P3", "ISETP.GE.AND.EX P1, P2, R3, R7, !P0, P4",
             "HSETP2.LT.AND P0, PT, -R2.H0_H0, |R3|.H1_H1, PT", "HSETP2.EQ.AND P1, P2, |R2|, -R3, !P5"]
    words = [assemble(f"{t}\nEXIT\n", arch).code[:16] for t in texts]
    listed = disassemble(b"".join(words), TARGETS[arch].nvdisasm_arch)
    assert [d.text for d in listed.lines] == texts


@pytest.mark.parametrize("arch", ARCHES)
def test_hfma2_mma_has_no_lane_selection_on_c(arch):
    """nvdisasm reads HFMA2.MMA's word with 81..82 set as no selection: refused, not dropped."""
    with pytest.raises(BobcError, match=r"lane selection \.H1_H1 is not available"):
        assemble("HFMA2.MMA R4, R0, R5, R6.H1_H1\nEXIT\n", arch)


def _s32(x):
    return np.asarray(x, dtype=np.uint32).view(np.int32).astype(np.int64)


def _u32(x):
    return (np.asarray(x, dtype=np.int64) & 0xFFFFFFFF).astype(np.uint32)


THREADS = 16
F32_IN = np.array([1.5, 2.5, -1.5, -0.5, 0.3, -0.3, 1e10, 3.7, -2.2, 0.0, -0.0, 8388609.0, 1e-40, np.inf,
                   -np.inf, 123.5], dtype=np.float32)
INT_A = np.array([0, 1, -1, 127, 128, -128, -129, 255, 256, 32767, 32768, -32769, 65535, 65536, -2**31, 2**31 - 1],
                 dtype=np.int64)
INT_B = np.array([0, 1, 5, 31, 32, 33, 8, 16, 40, 3, 7, 0xffffffff, 24, 12, 31, 30], dtype=np.int64)
U64_A = np.array([0, 1, 2**63, 2**64 - 1, 5, 2**32, 2**32 - 1, 7, 2**63 - 1, 3, 0, 9, 2**40, 1, 2**62, 2**64 - 2],
                 dtype=np.uint64)
U64_B = np.array([0, 2, 2**63 - 1, 1, 5, 2**32 - 1, 2**32, 7, 2**63, 2**64 - 3, 4, 9, 2**40 + 1, 2**64 - 1, 2**62, 2**64 - 2],
                 dtype=np.uint64)
HALVES = np.array([[1.0, 2.0], [-1.0, np.nan], [0.5, 0.5], [65504.0, -0.0], [0.0, 1e-7], [np.inf, 3.0],
                   [-2.0, -2.0], [1.5, 0.25], [3.0, 4.0], [np.nan, np.nan], [-0.0, 0.0], [7.0, -7.0],
                   [100.0, 0.001], [2.0, 1.0], [0.25, 8.0], [-65504.0, 1.0]], dtype=np.float16)
HALVES_B = HALVES[::-1].copy()


F64_IN = np.array([2.5, -2.5, 0.5 + 2.0**-40, -(0.5 + 2.0**-40), 2.0**52 - 0.5, -(2.0**52 - 0.5), 1e300, -0.0,
                   1e-310, 3.0, -3.7, 1.0000000001, np.inf, -np.inf, 123456789.5, -1e-300])


def _rounding():
    """cvt.rmi / rni / rzi / rpi: to -inf, to nearest even, to zero, to +inf (numpy's floor, rint,
    trunc, ceil: the sign of a zero kept, a subnormal preserved without .ftz)."""
    rows = np.zeros((THREADS, 48), np.uint8)
    x, x64 = F32_IN, F64_IN
    rows[:, :16] = np.stack([np.floor(x), np.rint(x), np.trunc(x), np.ceil(x)], 1).astype(np.float32).view(np.uint8)
    rows[:, 16:48] = np.stack([np.floor(x64), np.rint(x64), np.trunc(x64), np.ceil(x64)], 1).view(np.uint8)
    return {"in": x.view(np.uint32), "in64": x64.view(np.uint64)}, rows, ()


def _szext(a, b, signed, wrap):
    """PTX szext: b1 = b & 31; clamp: b >= 32 leaves a; the bits above b1 are the sign (.s32) or 0."""
    too_large = (b >= 32) & (not wrap)
    b1 = b & 31
    mask = np.where(too_large, 0, (0xFFFFFFFF << b1) & 0xFFFFFFFF)
    sign = np.where((b1 == 0) | too_large | (not signed), 0, (a >> ((b1 - 1) & 31)) & 1)
    return (a & ~mask & 0xFFFFFFFF) | np.where(sign == 1, mask, 0)


def _bmsk(a, b, wrap):
    """PTX bmsk: a mask of width b from bit a (its Semantics section, literally)."""
    a1, b1 = a & 31, b & 31
    mask0 = (0xFFFFFFFF << a1) & 0xFFFFFFFF
    total = a1 + b1
    mask1 = np.where(total >= 32, 0, (0xFFFFFFFF << np.minimum(total, 31)) & 0xFFFFFFFF)
    if not wrap:
        mask0 = np.where(a >= 32, 0, mask0)
        mask1 = np.where(b >= 32, 0, mask1)
    mask1 = np.where((total < 32) & ((b < 32) | wrap) & ((a < 32) | wrap) & (b1 == 0), 0xFFFFFFFF, mask1)
    return mask0 & ~mask1 & 0xFFFFFFFF


def _integer_forms():
    a_bits, b_bits = INT_A & 0xFFFFFFFF, INT_B & 0xFFFFFFFF
    a = _s32(a_bits)
    # bfind.s32 (PTX): the most significant bit not equal to the sign bit, 0xffffffff if none
    flipped = np.where(a < 0, ~a, a)
    bfind = np.array([int(v).bit_length() - 1 if v else -1 for v in flipped])
    # bfe.s32 a, 3, 8: bits 3..10 of a, sign-extended from bit 10
    field = (a_bits >> 3) & 0xFF
    bfe = np.where(field & 0x80, field - 0x100, field)
    values = [np.where(a == -2**31, a, np.abs(a)),
              np.clip(a, -128, 127), np.clip(a, 0, 255), np.clip(a, -32768, 32767), np.clip(a, 0, 65535),
              _bmsk(a_bits, b_bits, wrap=False), _bmsk(a_bits, b_bits, wrap=True),
              _szext(a_bits, b_bits, signed=True, wrap=False), _szext(a_bits, b_bits, signed=False, wrap=True),
              _szext(a_bits, b_bits, signed=False, wrap=False), bfe, bfind,
              _szext(a_bits, np.full_like(b_bits, 24), signed=True, wrap=False)]
    rows = np.zeros((THREADS, 16), np.uint32)
    rows[:, :13] = np.stack([_u32(v) for v in values], 1)
    return {"in": np.concatenate([_u32(a_bits), _u32(b_bits)])}, rows, (np.uint32(THREADS),)


def _wide_compares():
    a, b = U64_A, U64_B
    sa, sb = a.view(np.int64), b.view(np.int64)
    bits = ((sa < sb) * 1 | (a >= b) * 2 | (sa > sb) * 4 | (a < b) * 8 | (a == b) * 16 | (a != 0) * 32).astype(np.uint64)
    rows = np.stack([np.minimum(a, b), np.maximum(sa, sb).view(np.uint64), np.minimum(sa, sb).view(np.uint64), bits], 1)
    return {"in": np.concatenate([a, b])}, rows.astype(np.uint64), (np.uint32(THREADS),)


def _half_forms():
    a, b = HALVES, HALVES_B
    a1, a2, b1, b2 = (x.astype(np.float64) for x in (a[:, 0], a[:, 1], b[:, 0], b[:, 1]))
    with np.errstate(invalid="ignore"):
        bits = ((a1 < b1) * 1 | ((a2 > b2) | np.isnan(a2) | np.isnan(b2)) * 2 | (a1 == b1) * 4 | (a2 == b2) * 8
                | ((a1 >= b2) | np.isnan(a1) | np.isnan(b2)) * 16)
    # fma.rn.f16: a*b+c rounded once to binary16 (a*b is exact in binary64; rounding the sum there first
    # gives the exactly rounded binary16 for every finite one of these inputs, checked with fractions
    # when this was written); a NaN is any NaN (checked as such below)
    with np.errstate(invalid="ignore", over="ignore"):
        h5 = (a1 * b1 + a2).astype(np.float16)
        h6 = (a2 * a1 + b2).astype(np.float16)
    packed = h5.view(np.uint16).astype(np.uint32) | h6.view(np.uint16).astype(np.uint32) << 16
    rows = np.stack([bits.astype(np.uint32), packed], 1).astype(np.uint32)
    return {"in": np.concatenate([a.reshape(-1).view(np.uint32), b.reshape(-1).view(np.uint32)])}, rows, \
        (np.uint32(THREADS),)


WIDE_C = 0xFEDC_BA98_7654_3211


def _wide_products():
    """mul.hi.u64 a*b, a*c; mul.lo.s64 a*-7; mul.hi.s64 b*c (PTX: the high or low 64 bits of the
    128-bit product of the operands as unsigned / signed integers), with Python's integers."""
    def signed(v):
        return v - (1 << 64) if v >> 63 else v
    rows = []
    for a, b in zip(U64_A.tolist(), U64_B.tolist()):
        rows.append([(a * b) >> 64, (a * WIDE_C) >> 64, (signed(a) * -7) % (1 << 64),
                     ((signed(b) * signed(WIDE_C)) >> 64) % (1 << 64)])
    return {"in": np.concatenate([U64_A, U64_B])}, np.array(rows, np.uint64), \
        (np.uint32(THREADS), np.uint64(WIDE_C))


KERNELS = {"rounding": _rounding, "integer_forms": _integer_forms, "wide_compares": _wide_compares,
           "half_forms": _half_forms, "wide_products": _wide_products}
# every kernel runs in the simulator (wide_products' mul.hi.s64 subtracts with a carry-out, which it
# refused until probe s37 sassforms3); the GPU runs the same definitions (tests/gpu/test_math_forms_gpu.py)
NOT_SIMULATED: set[str] = set()


def _text(image: bytes, kernel: str) -> bytes:
    import lief
    lief.logging.disable()
    # a cubin is an ELF file: lief.ELF.parse takes its bytes as a list of ints from lief 0.14 (the
    # floor pyproject.toml admits) on; lief.parse took a list only from 0.17 (None before)
    binary = lief.ELF.parse(list(image))
    return bytes(next(s for s in binary.sections if s.name == f".text.{kernel}").content)


def _images(arch: str, kernel: str, folder, ptx=PTX, ptxas_arch: str | None = None) -> tuple[bytes, bytes]:
    """(ptxas's cubin of `ptx` (math_forms.ptx; for `ptxas_arch`, else `arch`), bobc's cubin of `kernel`
    from nvdisasm's listing of it, for `arch`)."""
    cubin = folder / "k.cubin"
    subprocess.run([ptxas(), f"-arch={ptxas_arch or arch}", "-O3", "-o", str(cubin), str(ptx)], check=True,
                   capture_output=True)
    listing = subprocess.run([nvdisasm(), "-hex", str(cubin)], check=True, capture_output=True, text=True).stdout
    written = folder / "k.sass"
    written.write_text(listing)
    out = folder / "bobc.cubin"
    assert main(["asm", str(written), "--arch", arch, "--kernel", kernel, "--cubin", "-o", str(out)]) == 0
    return cubin.read_bytes(), out.read_bytes()


@pytest.mark.parametrize("arch", ARCHES)
@pytest.mark.parametrize("kernel", sorted(KERNELS) + ["wide_conversions"])
def test_kernel_assembles_to_ptxas_text(arch, kernel, tmp_path, needs_ptxas, needs_nvdisasm):
    ptxas_image, bobc_image = _images(arch, kernel, tmp_path)
    assert _text(bobc_image, kernel) == _text(ptxas_image, kernel)


@pytest.mark.parametrize("arch", ARCHES)
@pytest.mark.parametrize("kernel", sorted(set(KERNELS) - NOT_SIMULATED))
def test_kernel_runs_to_the_ptx_semantics(arch, kernel, tmp_path, needs_ptxas, needs_nvdisasm):
    """ptxas's cubin and bobc's, run in the simulator (its control-code checker on), store what the PTX
    ISA's definitions give."""
    from bobc.sim.kernel import run_kernel
    inputs, want, extra = KERNELS[kernel]()
    for image in _images(arch, kernel, tmp_path):
        buffers = {"out": np.zeros_like(want), **inputs}
        got = run_kernel(image, arch, grid=1, block=THREADS, params=["out", *inputs, *extra],
                         buffers=buffers, kernel_name=kernel)["out"]
        assert_stores(f"{arch} simulated", kernel, got, want)


def assert_stores(where: str, kernel: str, got, want) -> None:
    """`got`, what a run of `kernel` stored, is `want` (KERNELS): bit for bit, but a NaN result of
    fma.rn.f16 need only be a NaN (its payload is the hardware's).  The simulator's runs here, the
    GPU's in tests/gpu/test_math_forms_gpu.py."""
    if kernel == "half_forms":
        assert (got[:, 0] == want[:, 0]).all(), f"{where} {kernel} predicates:\n{got[:, 0]}\n!=\n{want[:, 0]}"
        got_h, want_h = (np.ascontiguousarray(v[:, 1]).view(np.uint16) for v in (got, want))
        got_nan, want_nan = (((h & 0x7C00) == 0x7C00) & ((h & 0x3FF) != 0) for h in (got_h, want_h))
        assert (got_nan == want_nan).all() and (got_h[~want_nan] == want_h[~want_nan]).all(), \
            f"{where} {kernel} fma:\n{got_h}\n!=\n{want_h}"
        return
    assert got.tobytes() == want.tobytes(), f"{where} {kernel}:\n{got}\n!=\n{want}"


I2I_BITS = Path(__file__).resolve().parent / "data" / "i2i_bits.sass"


def i2i_bits_expected(a) -> np.ndarray:
    """What tests/sass/data/i2i_bits.sass stores for the s32 inputs `a`: each I2I.{S8,U8,S16,U16}.S32.SAT
    saturates to its type's range and writes the result as a 32-bit value of that type (the signed ones
    sign-extended).  Measured, not assumed: an H100 stores exactly this (tests/gpu/test_math_forms_gpu.py,
    session 36, where a model writing zeros above the 8 or 16 bits failed: -1 -> 0xffffffff)."""
    a = np.asarray(a, dtype=np.int64)
    columns = [np.clip(a, -128, 127) & 0xFFFFFFFF, np.clip(a, 0, 255), np.clip(a, -32768, 32767) & 0xFFFFFFFF,
               np.clip(a, 0, 65535)]
    return np.stack(columns, 1).astype(np.uint32)


@pytest.mark.parametrize("arch", ARCHES)
def test_i2i_result_bits_in_the_simulator(arch):
    from bobc.sim.kernel import run_kernel
    inputs = _u32(INT_A)
    want = i2i_bits_expected(INT_A)
    got = run_kernel(I2I_BITS.read_text(), arch, grid=1, block=THREADS, params=["in", "out"],
                     buffers={"in": inputs, "out": np.zeros_like(want)})["out"]
    assert got.tobytes() == want.tobytes(), f"{arch}:\n{got}\n!=\n{want}"


@pytest.mark.parametrize("arch", ARCHES)
def test_the_checker_holds_frnd_to_a_scoreboard(arch):
    """FRND is variable latency (ptxas sets a write scoreboard on every one): the simulator's control-code
    checker refuses a read of an unscored FRND result, and takes one waited on."""
    from bobc.sim.faults import Hazard
    from bobc.sim.kernel import run_kernel
    head = "[B------:R-:W-:-:S05] MOV R0, 0x3fc00000\n"
    tail = "[B------:R-:W-:-:S05] EXIT\n"
    with pytest.raises(Hazard):
        run_kernel(head + "[B------:R-:W-:-:S01] FRND.FLOOR R2, R0\n[B------:R-:W-:-:S04] FADD R3, R2, R2\n" + tail,
                   arch, grid=1, block=32, params=[])
    run_kernel(head + "[B------:R-:W0:-:S01] FRND.FLOOR R2, R0\n[B0-----:R-:W-:-:S04] FADD R3, R2, R2\n" + tail,
               arch, grid=1, block=32, params=[])
