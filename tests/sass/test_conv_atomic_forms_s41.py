"""Float atomics, a widening conversion and the shared-memory compare-and-store loop (probe s41 asmconv,
after probe s41 nanprobes2's found-and-left 2 and 3).  tools/ptx_corpus/conv_atomic_forms.ptx, both targets,
with the pinned ptxas and nvdisasm:
- ptxas writes ATOMG.E.ADD.F32.FTZ.RN.STRONG.GPU for atom.global.add.f32, ATOMG.E.ADD.F16x2.RN.STRONG.GPU for
  atom.global.add.noftz.f16x2, F2F.F64.F16 for cvt.f64.f16 and, for atom.shared.add.f32, a loop of LDS, FADD and
  ATOMS.CAST.SPIN -- forms `bobc asm` refused before (ATOMS.CAST.SPIN was learned already; ptxas here
  does not index its word on sm_86, so the `[R.X4]` form stays unlearned);
- each ptxas word assembles from nvdisasm's text to the same 128 bits, and nvdisasm reads it back;
- each kernel's listing assembles to ptxas's .text;
- ptxas's cubin and bobc's run in the simulator to what the PTX ISA defines, computed here in plain Python:
  atom.add.f32 returns the old word and adds (operands chosen with exact sums), cvt.f64.f16 widens exactly
  (struct's binary16), and atom.shared.add.f32 -- ATOMS.CAST.SPIN's compare-and-store, which stores only
  where the word still holds what the thread read and tells it whether it did -- adds every thread's value
  exactly once: the sums are integer-valued floats far below 2^24, so every order of the additions gives
  the same exact sum, and each thread's returned old word is a partial sum of its slot's chain;
- the packed-half atomic runs in the simulator, each half added on its own (exact sums of chosen halves).
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
PTX = PTX_CORPUS / "conv_atomic_forms.ptx"
THREADS = 96            # three warps: eight shared words, twelve threads contending for each
FORMS = re.compile(r"^(ATOMG\.E\.ADD\.F|ATOMS\.CAST|F2F\.F64\.F16)")


def _rows(arch):
    return [r for r in read_corpus(arch) if r.reference.startswith("conv_atomic_forms.ptx:") and FORMS.match(r.text)]


@pytest.mark.parametrize("arch", ARCHES)
def test_ptxas_writes_the_forms(arch):
    texts = {r.text.split(" ")[0] for r in _rows(arch)}
    assert {"ATOMG.E.ADD.F32.FTZ.RN.STRONG.GPU", "ATOMG.E.ADD.F16x2.RN.STRONG.GPU", "F2F.F64.F16",
            "ATOMS.CAST.SPIN"} <= texts, texts


@pytest.mark.parametrize("arch", ARCHES)
def test_each_ptxas_word_assembles_and_decodes_back(arch, needs_nvdisasm):
    assembles_and_decodes_back(_rows(arch), arch)


def _f32(values) -> np.ndarray:
    return np.array(values, dtype=np.float32)


def _global_add():
    acc = _f32([(t * 7) % 50 - 20 for t in range(THREADS)])
    add = _f32([t * 0.5 - 11 for t in range(THREADS)])           # halves: every sum exact in binary32
    # old = acc (the word before the add), acc + add after it (PTX atom.add: old returned, sum stored)
    return {"acc": acc, "old": np.zeros(THREADS, np.float32), "in": add}, \
        {"acc": [float(a) + float(b) for a, b in zip(acc, add)], "old": [float(a) for a in acc]}


def _widen():
    # every binary16 kind: zeros, subnormals, normals, the largest, infinities (NaN widening is probed by
    # tests/sass/test_sim_probe_s41_nanprobes2.py); struct's 'e' is IEEE binary16, exact in a double
    halves = [0x0000, 0x8000, 0x0001, 0x8001, 0x03FF, 0x0400, 0x3C00, 0xBC00, 0x3555, 0x7BFF, 0xFBFF, 0x7C00, 0xFC00]
    halves = (halves * (THREADS // len(halves) + 1))[:THREADS]
    want = [struct.unpack("<e", struct.pack("<H", h))[0] for h in halves]
    return {"out": np.zeros(THREADS, np.float64), "in": np.array(halves, dtype=np.uint16)}, {"out": want}


def _shared_add():
    values = _f32([t + 1 for t in range(THREADS)])
    sums = [float(sum(values[k::8])) for k in range(8)]          # slot k: the threads with tid % 8 == k
    return {"sums": np.zeros(8, np.float32), "old": np.zeros(THREADS, np.float32), "in": values}, {"sums": sums}


KERNELS = {"atom_add_f32_global": (_global_add, ["acc", "old", "in"]),
           "cvt_f64_f16": (_widen, ["out", "in"]),
           "atom_add_f32_shared": (_shared_add, ["sums", "old", "in"])}


@pytest.mark.parametrize("arch", ARCHES)
@pytest.mark.parametrize("kernel", sorted(KERNELS) + ["atom_add_f16x2_global"])
def test_kernel_assembles_to_ptxas_text(arch, kernel, tmp_path, needs_ptxas, needs_nvdisasm):
    ptxas_image, bobc_image = corpus_images(arch, kernel, tmp_path, PTX)
    assert _text(bobc_image, kernel) == _text(ptxas_image, kernel)


@pytest.mark.parametrize("arch", ARCHES)
@pytest.mark.parametrize("kernel", sorted(KERNELS))
def test_kernel_runs_to_the_ptx_isa(arch, kernel, tmp_path, needs_ptxas, needs_nvdisasm):
    from bobc.sim.kernel import run_kernel
    make, params = KERNELS[kernel]
    for image in corpus_images(arch, kernel, tmp_path, PTX):
        buffers, want = make()
        got = run_kernel(image, arch, grid=1, block=THREADS, params=params, buffers=buffers, kernel_name=kernel)
        for name, words in want.items():
            assert [float(v) for v in got[name]] == words, (arch, kernel, name)
        if kernel == "atom_add_f32_shared":
            # each thread's old word is its slot's sum before its own add: sorted, the olds of a slot are the
            # chain 0, v1, v1 + v2, ... of its values in the order the adds happened, ending at the sum
            values = buffers["in"]
            for k in range(8):
                threads = sorted(range(k, THREADS, 8), key=lambda t: float(got["old"][t]))
                running = 0.0
                for t in threads:
                    assert float(got["old"][t]) == running, (arch, k, t)
                    running += float(values[t])
                assert running == want["sums"][k]


@pytest.mark.parametrize("arch", ARCHES)
def test_the_packed_half_atomic_runs_in_the_simulator(arch, tmp_path, needs_ptxas, needs_nvdisasm):
    """ptxas's ATOMG.E.ADD.F16x2 adds each half on its own (PTX ISA, atom .add.noftz.f16x2; modeled
    since probe s41 f16x2atoms).  Hand-encoded binary16 halves, every sum exact: (1.5, -2.0) +
    (0.25, 4.0) = (1.75, 2.0), i.e. 0xC0003E00 + 0x44003400 -> 0x40003F00; the old word is returned."""
    from bobc.sim.kernel import run_kernel
    ptxas_image, _ = corpus_images(arch, "atom_add_f16x2_global", tmp_path, PTX)
    buffers = {"acc": np.full(32, 0xC0003E00, np.uint32), "old": np.zeros(32, np.uint32),
               "in": np.full(32, 0x44003400, np.uint32)}
    out = run_kernel(ptxas_image, arch, grid=1, block=32, params=["acc", "old", "in"], buffers=buffers,
                     kernel_name="atom_add_f16x2_global")
    assert (out["acc"] == 0x40003F00).all() and (out["old"] == 0xC0003E00).all()
