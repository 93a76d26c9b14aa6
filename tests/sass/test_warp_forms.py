"""Warp reductions, warp matches, float sets and R2P: forms ptxas writes that the assembler refused or the
simulator did not run (probe s39 sassforms7).  tools/ptx_corpus/warp_forms.ptx, both targets, with the pinned
ptxas and nvdisasm:
- ptxas writes REDUX (.SUM / .MIN / .MAX, .S32, .OR, .XOR and the plain .AND) into a uniform register for
  redux.sync, MATCH.ANY / MATCH.ALL (.U64 for a .b64) for match.any / match.all, FSET.BF for set.<cmp>.f32.f32
  and `R2P PR, R2, 0x7f` for seven bit tests of one word;
- each ptxas word assembles from nvdisasm's text to the same 128 bits, and nvdisasm reads it back;
- each kernel's listing assembles to ptxas's .text, and both cubins run in the simulator (its control-code
  checker on) to what the PTX ISA defines, computed here in plain Python over chosen inputs;
- P2R / R2P's byte forms (.B1..B3), which no corpus kernel holds, are refused by the simulator by name.
"""
from __future__ import annotations

import re
import struct

import numpy as np
import pytest

from bobc.sass.learn import PTX_CORPUS, read_corpus
from tests.sass.test_math_forms import _images as corpus_images
from tests.sass.test_math_forms import _text
from tests.sass.test_subword_constant_loads import assembles_and_decodes_back

ARCHES = ("sm_86", "sm_90")
PTX = PTX_CORPUS / "warp_forms.ptx"
THREADS = 64          # two whole warps: redux.sync / match.sync name every lane (0xffffffff)
WARP = 32
FORMS = re.compile(r"^(REDUX|MATCH|FSET|R2P)\b")


def _rows(arch):
    return [r for r in read_corpus(arch) if r.reference.startswith("warp_forms.ptx:") and FORMS.match(r.text)]


@pytest.mark.parametrize("arch", ARCHES)
def test_ptxas_writes_the_forms(arch):
    texts = {r.text.split(" ")[0] for r in _rows(arch)}
    assert {"REDUX.SUM", "REDUX.MIN", "REDUX.MAX", "REDUX.MIN.S32", "REDUX.MAX.S32", "REDUX", "REDUX.OR",
            "REDUX.XOR", "MATCH.ANY", "MATCH.ALL", "MATCH.ANY.U64", "MATCH.ALL.U64", "FSET.BF.LT.AND",
            "FSET.BF.NE.AND", "FSET.BF.NAN.AND", "R2P"} <= texts, texts


@pytest.mark.parametrize("arch", ARCHES)
def test_each_ptxas_word_assembles_and_decodes_back(arch, needs_nvdisasm):
    assembles_and_decodes_back(_rows(arch), arch)


def _s32(v: int) -> int:
    return v - (1 << 32) if v >> 31 else v


def _reductions():
    rng = np.random.default_rng(39)
    values = rng.integers(0, 1 << 32, THREADS, dtype=np.uint64).astype(np.uint32)
    values[5], values[40] = 0x80000000, 0x7FFFFFFF     # the signed extremes, one in each warp
    values[32:48] = 7                                   # a warp with repeats
    want = []
    for t in range(THREADS):
        warp = [int(v) for v in values[t // 32 * 32:t // 32 * 32 + 32]]
        a, o, x = 0xFFFFFFFF, 0, 0
        for v in warp:
            a &= v
            o |= v
            x ^= v
        want += [sum(warp) & 0xFFFFFFFF, min(warp), max(warp), min(_s32(v) for v in warp) & 0xFFFFFFFF,
                 max(_s32(v) for v in warp) & 0xFFFFFFFF, a, o, x]
    return {"in": values}, np.array(want, dtype=np.uint32)


def _matches():
    low = np.array([t % 3 for t in range(32)] + [9] * 32, dtype=np.uint64)
    high = np.array([t % 2 for t in range(32)] + [4] * 32, dtype=np.uint64)
    values = low | high << np.uint64(32)
    want = []
    for t in range(THREADS):
        warp = range(t // 32 * 32, t // 32 * 32 + 32)
        lanes = {u: 1 << (u % 32) for u in warp}
        any32 = sum(bit for u, bit in lanes.items() if low[u] == low[t])
        any64 = sum(bit for u, bit in lanes.items() if values[u] == values[t])
        all32 = len({int(low[u]) for u in warp}) == 1
        all64 = len({int(values[u]) for u in warp}) == 1
        full = sum(lanes.values())
        want += [any32, full if all32 else 0, int(all32), any64, full if all64 else 0, int(all64), 0, 0]
    return {"in": values}, np.array(want, dtype=np.uint64).astype(np.uint32)


def _bits(x: float) -> int:
    return struct.unpack("<I", struct.pack("<f", x))[0]


def _float(bits: int) -> float:
    return struct.unpack("<f", struct.pack("<I", bits))[0]


def _sets():
    nan, tiny = _bits(float("nan")), 0x80000001           # -(the smallest subnormal)
    pairs = [(1.0, 2.0), (2.0, 1.0), (3.0, 3.0), ("nan", 1.0), (1.0, "nan"), (-0.0, 0.0), ("tiny", 0.0),
             (0.0, "tiny"), (-5.0, -4.0), (float("inf"), 1e38)]
    words = []
    for t in range(THREADS):
        a, b = pairs[t % len(pairs)]
        words += [nan if v == "nan" else tiny if v == "tiny" else _bits(v) for v in (a, b)]
    want = []
    for t in range(THREADS):
        a, b = _float(words[2 * t]), _float(words[2 * t + 1])
        unordered = a != a or b != b
        fa = -0.0 if words[2 * t] == tiny else a          # .ftz flushes the subnormal to a signed zero
        fb = -0.0 if words[2 * t + 1] == tiny else b
        one = 0x3F800000
        want += [one if not unordered and a < b else 0,
                 one if (fa != fa or fb != fb) or fa >= fb else 0,          # set.geu.ftz
                 one if (not unordered and a != b) and a == a else 0,       # set.ne.and with p = num(a)
                 one if unordered else 0]                                   # set.nan
    return {"in": np.array(words, dtype=np.uint32)}, np.array(want, dtype=np.uint32)


def _bit_tests():
    # one warp: the kernel reads thread t's word at in[t] and its data at in[32 + 8 t + i]
    words = np.array([(t * 37) & 0x7F | (0xABC00 if t % 2 else 0) for t in range(WARP)], dtype=np.uint32)
    words[0], words[1] = 0x7F, 0xFFFFFF80
    data = np.arange(1000, 1000 + 8 * WARP, dtype=np.uint32)
    want = []
    for t in range(WARP):
        want += [int(data[8 * t + i]) if words[t] >> i & 1 else i + 3 for i in range(7)] + [0]
    return {"in": np.concatenate([words, data])}, np.array(want, dtype=np.uint32)


KERNELS = {"warp_reductions": _reductions, "warp_matches": _matches, "float_sets": _sets, "bit_tests": _bit_tests}


@pytest.mark.parametrize("arch", ARCHES)
@pytest.mark.parametrize("kernel", sorted(KERNELS))
def test_kernel_assembles_to_ptxas_text_and_runs_to_the_ptx_isa(arch, kernel, tmp_path, needs_ptxas, needs_nvdisasm):
    from bobc.sim.kernel import run_kernel
    ptxas_image, bobc_image = corpus_images(arch, kernel, tmp_path, PTX)
    assert _text(bobc_image, kernel) == _text(ptxas_image, kernel)
    inputs, want = KERNELS[kernel]()
    for image in (ptxas_image, bobc_image):
        got = run_kernel(image, arch, grid=1, block=WARP if kernel == "bit_tests" else THREADS, params=["out", "in"],
                         buffers={"out": np.zeros_like(want), **inputs}, kernel_name=kernel)["out"]
        assert got.tolist() == want.tolist(), (arch, kernel)
