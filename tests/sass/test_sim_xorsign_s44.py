"""min / max .xorsign.abs run in the simulator (probe s44 simops): ptxas writes FMNMX.XORSIGN (.f32), HMNMX2.XORSIGN
(.f16, .f16x2) and HMNMX2.BF16_V2.XORSIGN (.bf16x2) for them, and the simulator refused each by name ("FMNMX.XORSIGN
(modifier XORSIGN) is not modeled"), stopping the kernel.

The rule (PTX ISA min / max: ".xorsign.abs: the absolute values of a and b are compared, and the sign of the result
is the XOR of the signs of a and b") leaves NaNs' part open; session 43's H100 run of bf16_forms.ptx's xorsign
kernels (tests/gpu/logs/2026-12-07-s43-h100-nan_bits.log, which lists the GPU's word wherever it differs from the
plain min / max oracle of tests/sass/test_bf16_forms_s42.py on the same inputs) settles it for bfloat16: a NaN input
gives the other's magnitude, the sign bits XORed -- a NaN's sign bit counts (max of |-NaN| and |-2^-100| is +2^-100)
-- and two NaNs the canonical NaN.  The first test replays that run: the simulator must store the H100's every word.
The others hold binary16 and binary32 to the same rule, worked on the bits by hand here (non-negative floats order
as their bit patterns); tests/gpu/test_sim_probes_gpu.py runs those kernels on the GPU."""
from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

from tests.sass import test_bf16_forms_s42 as bf16
from tests.sass.test_math_forms import _images as corpus_images
from tests.sass.test_sim_roundings_s44 import kernel, run

REPO = Path(__file__).resolve().parents[2]
H100_LOG = REPO / "tests" / "gpu" / "logs" / "2026-12-07-s43-h100-nan_bits.log"


def h100_words(name: str) -> tuple[dict, np.ndarray]:
    """(buffers, the H100's every output word) of bf16_forms.ptx's `name` kernel as session 43 ran it: the plain
    min / max oracle's words, replaced where the log lists the GPU's."""
    buffers, words = bf16.case(name.replace("xorsign_abs_", ""))
    text = H100_LOG.read_text()
    section = text.split(f"== {name} (ptxas):", 1)[1].split("\n==", 1)[0]
    listed = {(int(a, 16), int(b, 16)): int(g, 16)
              for a, b, g in re.findall(r"a=(0x[0-9a-f]+) b=(0x[0-9a-f]+) c=0x[0-9a-f]+: GPU (0x[0-9a-f]+)", section)}
    assert listed, f"no GPU words for {name} in {H100_LOG.name}"
    words = words.copy()
    for t, (a, b) in enumerate(zip(buffers["a"].tolist(), buffers["b"].tolist())):
        words[t] = listed.get((a, b), words[t])
    return buffers, words


@pytest.mark.parametrize("arch", ["sm_86", "sm_90"])
@pytest.mark.parametrize("name", ["min_xorsign_abs_bf16x2", "max_xorsign_abs_bf16x2"])
def test_bf16x2_xorsign_stores_the_h100s_words(name, arch, tmp_path, needs_ptxas, needs_nvdisasm):
    from bobc.sim.kernel import run_kernel
    image = corpus_images(arch, name, tmp_path, bf16.BOTH)[0]
    buffers, want = h100_words(name)
    got = run_kernel(image, arch, grid=1, block=len(want), params=["out", "a", "b", "c"], buffers=buffers,
                     kernel_name=name)["out"]
    bad = [f"a={int(buffers['a'][t]):#x} b={int(buffers['b'][t]):#x}: sim {int(got[t]):#x} H100 {int(want[t]):#x}"
           for t in range(len(want)) if got[t] != want[t]]
    assert not bad, f"{arch} {name}:\n" + "\n".join(bad[:12])


# ----------------------------------------------------------------- binary16 and binary32, by the rule on the bits
def xorsign_bits(x: int, y: int, take_min: bool, width: int) -> int:
    sign = 1 << (width - 1)
    exponent = {16: 0x7C00, 32: 0x7F800000}[width]
    fraction = {16: 0x3FF, 32: 0x7FFFFF}[width]
    mx, my = x & (sign - 1), y & (sign - 1)
    nx, ny = ((m & exponent) == exponent and m & fraction != 0 for m in (mx, my))
    if nx and ny:
        return sign - 1                       # the canonical NaN: 0x7fff, 0x7fffffff
    s = (x ^ y) & sign
    if nx or ny:
        return (my if nx else mx) | s
    return (min(mx, my) if take_min else max(mx, my)) | s


F16_SPECIAL = [0x0000, 0x8000, 0x0001, 0x8001, 0x3C00, 0xBC00, 0x7BFF, 0xFBFF, 0x7C00, 0xFC00, 0x7E00, 0xFE00, 0x7C01,
               0xFD55, 0x3555, 0xB800, 0x03FF, 0x83FF, 0x4248, 0xC248]
F32_SPECIAL = [0x00000000, 0x80000000, 0x00000001, 0x80000001, 0x3F800000, 0xBF800000, 0x7F7FFFFF, 0xFF7FFFFF,
               0x7F800000, 0xFF800000, 0x7FC00000, 0xFFC00000, 0x7F800001, 0xFFAAAAAA, 0x3EAAAAAB, 0xBF000000,
               0x007FFFFF, 0x807FFFFF, 0x40490FDB, 0xC0490FDB]


def xorsign_words(width: int) -> np.ndarray:
    """[4, 512] words: every pair of specials (both halves of a 16-bit pair), then random words."""
    rng = np.random.default_rng(44)
    special = F16_SPECIAL if width == 16 else F32_SPECIAL
    pairs = np.array([(a, b) for a in special for b in special], np.uint32)
    words = rng.integers(0, 1 << 32, (4, 512), dtype=np.uint32)
    words[0, :len(pairs)], words[1, :len(pairs)] = pairs[:, 0], pairs[:, 1]
    if width == 16:
        words[0, :len(pairs)] |= np.roll(pairs[:, 1], 3) << np.uint32(16)
        words[1, :len(pairs)] |= np.roll(pairs[:, 0], 5) << np.uint32(16)
    return words


XORSIGN = {  # name: (PTX, min?, width, halves)
    "max_xorsign_f32": ("max.xorsign.abs.f32 %f3, %f1, %f2; mov.b32 %r10, %f3;", False, 32, 1),
    "min_xorsign_f32": ("min.xorsign.abs.f32 %f3, %f1, %f2; mov.b32 %r10, %f3;", True, 32, 1),
    "min_xorsign_f16x2": ("min.xorsign.abs.f16x2 %r10, %r2, %r3;", True, 16, 2),
    "max_xorsign_f16x2": ("max.xorsign.abs.f16x2 %r10, %r2, %r3;", False, 16, 2),
    "max_xorsign_f16": ("mov.b32 {%h1, %h2}, %r2; mov.b32 {%h3, %h4}, %r3; max.xorsign.abs.f16 %h5, %h1, %h3; "
                        "cvt.u32.u16 %r10, %h5;", False, 16, 1),
}


def xorsign_expected(name: str, words: np.ndarray) -> np.ndarray:
    _, take_min, width, halves = XORSIGN[name]
    out = []
    for a, b in zip(words[0].tolist(), words[1].tolist()):
        if width == 32:
            out.append(xorsign_bits(a, b, take_min, 32))
        else:
            out.append(sum(xorsign_bits(a >> 16 * k & 0xFFFF, b >> 16 * k & 0xFFFF, take_min, 16) << 16 * k
                           for k in range(halves)))
    return np.array(out, np.uint32)


@pytest.mark.parametrize("arch", ["sm_86", "sm_90"])
@pytest.mark.parametrize("name", sorted(XORSIGN))
def test_xorsign_follows_the_rule(name, arch, tmp_path, needs_ptxas):
    words = xorsign_words(XORSIGN[name][2])
    got = run(name, arch, XORSIGN[name][0], words, tmp_path)
    want = xorsign_expected(name, words)
    bad = [f"a={int(a):#x} b={int(b):#x}: sim {int(g):#x} want {int(w):#x}"
           for a, b, g, w in zip(words[0], words[1], got, want) if g != w]
    assert not bad, f"{arch} {name}: {len(bad)} wrong\n" + "\n".join(bad[:12])


def test_rule_by_hand():
    """max.xorsign.abs(-1, +inf) = -inf; min(-2, -3) = +2; max(+NaN, -1) = -1; max(-NaN, -1) = +1; NaN, NaN the
    canonical NaN; the H100's bfloat16 case of the docstring (0xffc1 NaN, 0x8d80) in binary16 dress."""
    assert xorsign_bits(0xBC00, 0x7C00, False, 16) == 0xFC00
    assert xorsign_bits(0xC000, 0xC200, True, 16) == 0x4000
    assert xorsign_bits(0x7E00, 0xBC00, False, 16) == 0xBC00 and xorsign_bits(0xFE00, 0xBC00, False, 16) == 0x3C00
    assert xorsign_bits(0x7E00, 0xFE01, True, 16) == 0x7FFF and xorsign_bits(0x7FC00000, 0x7FC00000, 0, 32) == 0x7FFFFFFF


def sm90_cases() -> dict:
    """name -> (PTX for sm_90, input words [4, 512], the rule's words): for tests/gpu/test_sim_probes_gpu.py (ptxas's
    cubins; bobc's assembler has FMNMX.XORSIGN but not HMNMX2.XORSIGN of binary16 yet)."""
    out = {}
    for name, (body, _, width, _) in sorted(XORSIGN.items()):
        words = xorsign_words(width)
        out[f"s44_{name}"] = (kernel(f"s44_{name}", "sm_90", body), words, xorsign_expected(name, words))
    return out
