"""Integer and quantization forms of int8 kernels whose opcodes the assembler had no layout for (probe s37
sassforms4; tools/ptx_corpus/int_forms.ptx, both targets, and sm90_int_forms.ptx, sm_90 alone):
IDP.4A / IDP.2A (dp4a / dp2a), F2IP.U8.F32.NTZ (cvt.rni.sat.u8.f32 / cvt.rzi.u8.f32), FCHK (div.rn.f32's
slow-path check), VABSDIFF(.U32) / VABSDIFF4.U8(.ACC) (sad, vabsdiff4), and sm_90's VIMNMX.S16x2 / .U16x2 /
.RELU (min / max .s16x2, .u16x2, .relu).  With the pinned ptxas and nvdisasm:
- ptxas writes each form ("unknown or unsupported opcode IDP" / "no sm_90 encoding for 'VIMNMX.S16x2 ...'" before);
- each ptxas word assembles from nvdisasm's text to the same 128 bits, and nvdisasm reads it back;
- each kernel: ptxas's cubin -> nvdisasm -> `bobc asm --cubin` gives ptxas's .text;
- dot_products and quantize, ptxas's cubin and bobc's, run in the simulator to the PTX ISA's definitions of
  dp4a / dp2a and cvt.rni.sat.u8.f32 / cvt.rzi.u8.f32 (computed here with Python integers / numpy).
"""
from __future__ import annotations

import re

import numpy as np
import pytest

from bobc.sass.learn import PTX_CORPUS, read_corpus
from tests.sass.test_math_forms import _images as corpus_images
from tests.sass.test_math_forms import _text
from tests.sass.test_subword_constant_loads import assembles_and_decodes_back

ARCHES = ("sm_86", "sm_90")
FILES = {"sm_86": ("int_forms.ptx",), "sm_90": ("int_forms.ptx", "sm90_int_forms.ptx")}
FORMS = {
    "IDP": [rf"^IDP\.4A\.{a}\.{b} R" for a in ("S8", "U8") for b in ("S8", "U8")]
           + [rf"^IDP\.2A\.{h}\.{a}\.{b} R" for h, a, b in (("LO", "S16", "S8"), ("HI", "U16", "U8"),
                                                            ("LO", "S16", "U8"), ("HI", "U16", "S8"))],
    "F2IP": [r"^F2IP\.U8\.F32\.NTZ R", r"^F2IP\.U8\.F32\.TRUNC\.NTZ R"],
    "FCHK": [r"^FCHK P\d, R"],
    "VABSDIFF": [r"^VABSDIFF\.U32 R", r"^VABSDIFF R", r"^VABSDIFF4\.U8\.ACC R", r"^VABSDIFF4\.U8 R"],
}
SM90_FORMS = {"VIMNMX": [r"^VIMNMX\.S16x2 R", r"^VIMNMX\.U16x2 R", r"^VIMNMX\.S16x2\.RELU R", r"^VIMNMX\.RELU R"]}
PATTERNS = [p for group in (*FORMS.values(), *SM90_FORMS.values()) for p in group]


def _rows(arch):
    return [r for r in read_corpus(arch) if r.reference.split(":")[0] in FILES[arch]
            and any(re.match(p, r.text) for p in PATTERNS)]


@pytest.mark.parametrize("arch", ARCHES)
def test_ptxas_writes_these_forms(arch):
    texts = [r.text for r in _rows(arch)]
    for name, patterns in {**FORMS, **(SM90_FORMS if arch == "sm_90" else {})}.items():
        for pattern in patterns:
            assert any(re.match(pattern, t) for t in texts), f"{arch}: no {name} ({pattern}) in ptxas's corpus"


@pytest.mark.parametrize("arch", ARCHES)
def test_each_ptxas_word_assembles_and_decodes_back(arch, needs_nvdisasm):
    assembles_and_decodes_back(_rows(arch), arch)


def _images(arch: str, ptx: str, kernel: str, folder) -> tuple[bytes, bytes]:
    """(ptxas's cubin of `ptx` (sm_90a for an sm90_ file), bobc's cubin of `kernel` from nvdisasm's listing of it)."""
    return corpus_images(arch, kernel, folder, PTX_CORPUS / ptx, "sm_90a" if ptx.startswith("sm90_") else arch)


KERNELS = [(arch, "int_forms.ptx", k) for arch in ARCHES
           for k in ("dot_products", "quantize", "divide", "absolute_differences")] + [
          ("sm_90", "sm90_int_forms.ptx", "packed_min_max")]


@pytest.mark.parametrize(("arch", "ptx", "kernel"), KERNELS)
def test_kernel_assembles_to_ptxas_text(arch, ptx, kernel, tmp_path, needs_ptxas, needs_nvdisasm):
    ptxas_image, bobc_image = _images(arch, ptx, kernel, tmp_path)
    assert _text(bobc_image, kernel) == _text(ptxas_image, kernel)


THREADS = 32
WORDS = np.array([0, 1, 0xFFFFFFFF, 0x7F7F7F7F, 0x80808080, 0x12345678, 0xDEADBEEF, 0x01FF80FF, 0x00FF00FF,
                  0xFF00FF00, 0x7FFF8000, 0x80007FFF, 0x01020304, 0xFEFDFCFB, 0x55AA55AA, 0xC693565F] * 2,
                 dtype=np.uint32)
B_WORDS = np.roll(WORDS, 5) ^ np.uint32(0x0F0F0F0F)
C_WORDS = np.roll(WORDS, 11)


def _part(v: int, index: int, bits: int, signed: bool) -> int:
    x = v >> (index * bits) & ((1 << bits) - 1)
    return x - (1 << bits) if signed and x >> (bits - 1) else x


def dp4a(a: int, b: int, c: int, sa: bool, sb: bool) -> int:
    """PTX dp4a: c + the four products of a's and b's bytes, each signed or not, wrapped to 32 bits."""
    return (c + sum(_part(a, k, 8, sa) * _part(b, k, 8, sb) for k in range(4))) & 0xFFFFFFFF


def dp2a(a: int, b: int, c: int, hi: bool, sa: bool, sb: bool) -> int:
    """PTX dp2a: c + a's two 16-bit halves times b's bytes 0, 1 (.lo) or 2, 3 (.hi), wrapped to 32 bits."""
    first = 2 if hi else 0
    return (c + sum(_part(a, k, 16, sa) * _part(b, first + k, 8, sb) for k in range(2))) & 0xFFFFFFFF


def dot_products_want() -> np.ndarray:
    want = np.zeros((THREADS, 8), np.uint32)
    for i, (a, b, c) in enumerate(zip(WORDS.tolist(), B_WORDS.tolist(), C_WORDS.tolist())):
        want[i] = [dp4a(a, b, c, True, True), dp4a(a, b, c, False, False), dp4a(a, b, c, True, False),
                   dp4a(a, b, c, False, True), dp2a(a, b, c, False, True, True), dp2a(a, b, c, True, False, False),
                   dp2a(a, b, c, False, True, False), dp2a(a, b, c, True, False, True)]
    return want


FLOATS = np.array([0.0, -0.0, 0.5, 1.5, 2.5, 3.5, -0.5, -1.5, 254.5, 255.5, 255.49, 256.0, 1e9, -1e9, np.inf, -np.inf,
                   np.nan, 127.5, 128.5, -128.5, -129.0, 0.4999999, 1e-40, 7.7, -7.7, 99.5, 100.5, 3e38, -3e38,
                   0.75, 200.25, -0.75], dtype=np.float32)


def _cvt(x: float, rounding, low: int, high: int) -> int:
    """PTX cvt.<rounding>.sat? to an integer type from .f32: the value rounded, clamped to the type's
    range (a float-to-integer cvt always saturates), NaN 0; written as its 32-bit extension."""
    if np.isnan(x):
        return 0
    return int(min(max(rounding(np.float64(x)), low), high)) & 0xFFFFFFFF


def quantize_want() -> np.ndarray:
    want = np.zeros((THREADS, 8), np.uint32)
    for i, x in enumerate(FLOATS.tolist()):
        want[i, :6] = [_cvt(x, np.rint, 0, 255), _cvt(x, np.rint, -128, 127), _cvt(x, np.trunc, 0, 255),
                       _cvt(x, np.trunc, -128, 127), _cvt(x, np.rint, 0, 255), _cvt(x, np.floor, 0, 255)]
    return want


@pytest.mark.parametrize("arch", ARCHES)
@pytest.mark.parametrize("kernel", ["dot_products", "quantize"])
def test_int8_kernels_run_to_the_ptx_definitions(arch, kernel, tmp_path, needs_ptxas, needs_nvdisasm):
    from bobc.sim.kernel import run_kernel
    want = dot_products_want() if kernel == "dot_products" else quantize_want()
    inputs = np.concatenate([WORDS, B_WORDS, C_WORDS]) if kernel == "dot_products" else FLOATS.view(np.uint32)
    for which, image in zip(("ptxas", "bobc"), _images(arch, "int_forms.ptx", kernel, tmp_path)):
        got = run_kernel(image, arch, grid=1, block=THREADS, params=["out", "in", np.uint32(THREADS)],
                         buffers={"out": np.zeros_like(want), "in": inputs}, kernel_name=kernel)["out"]
        assert got.tobytes() == want.tobytes(), f"{arch} {which} {kernel}:\n{got}\n!=\n{want}"


def _s(v: int, bits: int) -> int:
    return _part(v, 0, bits, True)


def _halves(f, signed: bool):
    def each(a: int, b: int) -> int:
        return sum((f(_part(a, k, 16, signed), _part(b, k, 16, signed)) & 0xFFFF) << 16 * k for k in range(2))
    return each


def packed_min_max_want() -> np.ndarray:
    """sm90_int_forms.ptx packed_min_max's eight results of a = WORDS, b = B_WORDS (the PTX ISA's min / max:
    .s16x2 / .u16x2 each half on its own, .relu a negative result 0)."""
    relu = lambda v: max(v, 0)   # noqa: E731
    functions = [_halves(min, True), _halves(max, False), _halves(lambda x, y: relu(max(x, y)), True),
                 lambda a, b: relu(min(_s(a, 32), _s(b, 32))), lambda a, b: relu(max(_s(a, 32), _s(b, 32))),
                 _halves(min, False), lambda a, b: min(_s(a, 16), _s(b, 16)) & 0xFFFF,
                 lambda a, b: max(a & 0xFFFF, b & 0xFFFF)]
    return np.array([[f(a, b) & 0xFFFFFFFF for f in functions] for a, b in zip(WORDS.tolist(), B_WORDS.tolist())],
                    dtype=np.uint32)


def test_sm90_packed_min_max_runs_to_the_ptx_definitions(tmp_path, needs_ptxas, needs_nvdisasm):
    from bobc.sim.kernel import run_kernel
    want = packed_min_max_want()
    for which, image in zip(("ptxas", "bobc"), _images("sm_90", "sm90_int_forms.ptx", "packed_min_max", tmp_path)):
        got = run_kernel(image, "sm_90", grid=1, block=THREADS, params=["out", "in", np.uint32(THREADS)],
                         buffers={"out": np.zeros_like(want), "in": np.concatenate([WORDS, B_WORDS])},
                         kernel_name="packed_min_max")["out"]
        assert got.tobytes() == want.tobytes(), f"sm_90 {which}:\n{got}\n!=\n{want}"


def gpu_cases() -> dict:
    """The kernels above for the GPU (tests/gpu/test_int_forms_gpu.py; cubins by tests/gpu/prepare.sh, sm_90):
    kernel -> (its corpus PTX file, its input words, the PTX ISA's definition of its output).  The
    simulator's readings of IDP, F2IP and VIMNMX.S16x2 / .U16x2 / .RELU rest on the ISA's words; the GPU
    must store the same (absolute_differences: VABSDIFF / VABSDIFF4, whose C the simulator reads as the ISA
    defines vabsdiff4 with the default mask)."""
    return {"dot_products": ("int_forms.ptx", np.concatenate([WORDS, B_WORDS, C_WORDS]), dot_products_want()),
            "quantize": ("int_forms.ptx", FLOATS.view(np.uint32), quantize_want()),
            "packed_min_max": ("sm90_int_forms.ptx", np.concatenate([WORDS, B_WORDS]), packed_min_max_want()),
            "absolute_differences": ("int_forms.ptx", np.concatenate([WORDS, B_WORDS, C_WORDS]),
                                     absolute_differences_want())}


def absolute_differences_want() -> np.ndarray:
    """int_forms.ptx absolute_differences of a = WORDS, b = B_WORDS, c = C_WORDS (the PTX ISA: sad.u32 / .s32,
    vabsdiff .u32 / .s32, vabsdiff4 .u32 / .s32 .add, vabsdiff2.u32.add, vabsdiff4.u32 with the default mask)."""
    byte = lambda k, v, signed: _part(v, k, 8, signed)   # noqa: E731
    rows = []
    for a, b, c in zip(WORDS.tolist(), B_WORDS.tolist(), C_WORDS.tolist()):
        rows.append([c + abs(a - b), c + abs(_s(a, 32) - _s(b, 32)), abs(a - b), abs(_s(a, 32) - _s(b, 32)),
                     c + sum(abs(byte(k, a, False) - byte(k, b, False)) for k in range(4)),
                     c + sum(abs(byte(k, a, True) - byte(k, b, True)) for k in range(4)),
                     c + sum(abs(_part(a, k, 16, False) - _part(b, k, 16, False)) for k in range(2)),
                     sum(abs(byte(k, a, False) - byte(k, b, False)) << 8 * k for k in range(4))])
    return np.array([[v & 0xFFFFFFFF for v in row] for row in rows], dtype=np.uint32)


@pytest.mark.parametrize("arch", ARCHES)
def test_absolute_differences_run_to_the_ptx_definitions(arch, tmp_path, needs_ptxas, needs_nvdisasm):
    """VABSDIFF(.U32), VABSDIFF4.U8(.ACC) and LEA.HI.X's '~' operand (sad.s32), refused by the simulator before."""
    from bobc.sim.kernel import run_kernel
    want = absolute_differences_want()
    for which, image in zip(("ptxas", "bobc"), _images(arch, "int_forms.ptx", "absolute_differences", tmp_path)):
        got = run_kernel(image, arch, grid=1, block=THREADS, params=["out", "in", np.uint32(THREADS)],
                         buffers={"out": np.zeros_like(want), "in": np.concatenate([WORDS, B_WORDS, C_WORDS])},
                         kernel_name="absolute_differences")["out"]
        assert got.tobytes() == want.tobytes(), f"{arch} {which}:\n{got}\n!=\n{want}"
