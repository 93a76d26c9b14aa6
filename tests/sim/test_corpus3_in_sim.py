"""ptxas's corpus3 kernels (tools/ptx_corpus/corpus3.cu: the kernels that ran on the H200 in
tests/gpu/test_corpus_kernels.py) in the simulator, against NumPy: ptxas -O3 of corpus3.ptx for
sm_86 (here) and the carried sm_90 cubin (tests/gpu/data/corpus3.sm_90.cubin, the one the GPU ran).
Tensor cores with ldmatrix, binary16 pairs, binary64, cp.async, local memory and spills, the
uniform datapath, atomics.  tests/gpu/test_sim_agrees_with_gpu.py compares the same runs with the
GPU's bit for bit."""
from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
from ptx_kernels import compile_ptx  # noqa: E402

from bobc.sim.kernel import run_kernel  # noqa: E402

REPO = Path(__file__).resolve().parents[2]
TARGETS = pytest.mark.parametrize("target", ["sm_86", "sm_90"])


def corpus3(target: str) -> bytes:
    if target == "sm_90":
        return (REPO / "tests/gpu/data/corpus3.sm_90.cubin").read_bytes()
    return compile_ptx((REPO / "tools/ptx_corpus/corpus3.ptx").read_text(), target)


def halves(words):
    w = np.asarray(words, dtype=np.uint32)
    return (w & 0xFFFF).astype(np.uint16).view(np.float16), (w >> 16).astype(np.uint16).view(np.float16)


# The corpus kernels' launches and inputs, shared with the GPU comparison test.
def tensor_mma_case(rng):
    a = rng.standard_normal((16, 16)).astype(np.float16)
    b = rng.standard_normal((8, 16)).astype(np.float16)          # B column-major: b[n][k]
    c = rng.standard_normal((16, 8)).astype(np.float32)
    return dict(grid=1, block=32, params=["d", "a", "b", "c"],
                buffers={"d": np.zeros((16, 8), np.float32), "a": a.view(np.uint16), "b": b.view(np.uint16),
                         "c": c})


def tensor_mma_f16_case(rng):
    a = rng.integers(0, 2**32, 128, dtype=np.uint32) & np.uint32(0x3BFF3BFF)   # finite halves below 1
    b = rng.integers(0, 2**32, 64, dtype=np.uint32) & np.uint32(0x3BFF3BFF)
    return dict(grid=1, block=32, params=["d", "a", "b"], buffers={"d": np.zeros(64, np.uint32), "a": a, "b": b})


def double_math_case(rng, n=512):
    return dict(grid=n // 256, block=256, params=["out", "in", "fin", np.int32(n)],
                buffers={"out": np.zeros(2 * n), "in": rng.standard_normal(2 * n),
                         "fin": rng.standard_normal(n).astype(np.float32)})


def local_memory_case(rng, threads=256):
    return dict(grid=threads // 128, block=128, params=["out", "in", "index"],
                buffers={"out": np.zeros(threads, np.float32),
                         "in": rng.standard_normal(threads * 48).astype(np.float32),
                         "index": rng.integers(0, 1000, threads).astype(np.int32)})


def async_copy_case(rng, blocks=4):
    return dict(grid=blocks, block=128, params=["out", "in"],
                buffers={"out": np.zeros(blocks * 128, np.float32),
                         "in": rng.standard_normal(blocks * 256 * 4).astype(np.float32)})


def uniform_path_case(rng, blocks=3, rows=20, stride=7):
    return dict(grid=blocks, block=64, params=["out", "in", np.int32(stride), np.int32(rows)],
                buffers={"out": np.zeros(blocks * 64, np.float32),
                         "in": rng.standard_normal((blocks * 32 * 33, 2)).astype(np.float32)})


def register_spills_case(rng, n=64):
    return dict(grid=1, block=n, params=["out", "in", np.int32(n)],
                buffers={"out": np.zeros(40 * n, np.float32), "in": rng.uniform(-1, 1, 40 * n).astype(np.float32)})


def half_math_case(rng, n=128):
    words = rng.integers(0, 2**32, 3 * n, dtype=np.uint32) & np.uint32(0xBBFFBBFF)   # finite, |x| < 1
    return dict(grid=1, block=n, params=["out", "in", "fout", np.int32(n)],
                buffers={"out": np.zeros(n, np.uint32), "in": words, "fout": np.zeros(n, np.float32)})


def barriers_case(rng, blocks=2):
    return dict(grid=blocks, block=256, params=["out", "in"],
                buffers={"out": np.zeros(blocks * 256, np.int32),
                         "in": rng.integers(-5, 10, blocks * 256).astype(np.int32)})


CASES = {"barriers": barriers_case, "tensor_mma": tensor_mma_case, "tensor_mma_f16": tensor_mma_f16_case, "double_math": double_math_case,
         "local_memory": local_memory_case, "async_copy": async_copy_case, "uniform_path": uniform_path_case,
         "register_spills": register_spills_case, "half_math": half_math_case}


def run(name, target, seed=0):
    case = CASES[name](np.random.default_rng(seed))
    return case, run_kernel(corpus3(target), target, kernel_name=name, **case)


@TARGETS
def test_barriers_reductions_and_named_barriers(target):
    """__syncthreads_count/_and/_or (BAR.RED.POPC/AND/OR + B2R.RESULT), bar.arrive / bar.sync 1, 256
    between two halves of the block, bar.sync 2, a ballot."""
    case, out = run("barriers", target)
    x = case["buffers"]["in"].reshape(-1, 256).astype(np.int64)
    expected = []
    for v in x:
        s = v.copy()
        s[128:] += s[:128]
        w = s[255 - np.arange(256)]
        ballots = np.repeat([(w[32 * k:32 * k + 32] > 0).sum() for k in range(8)], 32)
        expected.append((v > 0).sum() + 2 * int((v != 3).all()) + 4 * int((v == 5).any()) + w + ballots)
    assert np.array_equal(out["out"], np.concatenate(expected))


@TARGETS
def test_tensor_mma_with_ldmatrix(target):
    case, out = run("tensor_mma", target)
    a = case["buffers"]["a"].view(np.float16).astype(np.float64)
    b = case["buffers"]["b"].view(np.float16).astype(np.float64)
    exact = a @ b.T + case["buffers"]["c"]
    assert np.array_equal(out["d"], exact.astype(np.float32))


@TARGETS
def test_tensor_mma_f16_both_shapes(target):
    case, out = run("tensor_mma_f16", target)
    lane = np.arange(32)
    g, t = lane // 4, lane % 4
    words_a, words_b = case["buffers"]["a"].reshape(4, 32), case["buffers"]["b"].reshape(2, 32)
    A = np.zeros((16, 16))
    for r in range(4):                      # PTX ISA mma.m16n8k16 .f16 A fragment
        lo, hi = halves(words_a[r])
        rows, cols = g + 8 * (r % 2), 2 * t + 8 * (r // 2)
        A[rows, cols], A[rows, cols + 1] = lo, hi
    B = np.zeros((16, 8))
    for r in range(2):
        lo, hi = halves(words_b[r])
        B[2 * t + 8 * r, g], B[2 * t + 8 * r + 1, g] = lo, hi
    D = (A @ B).astype(np.float16)          # k16, C = 0
    E = (A[:, :8] @ B[:8, :] + D).astype(np.float16)      # k8 on a0,a1 / b0 with C = D
    pack = lambda m: np.stack([m[g + 8 * r, 2 * t].view(np.uint16).astype(np.uint32) |
                               (m[g + 8 * r, 2 * t + 1].view(np.uint16).astype(np.uint32) << 16) for r in range(2)])
    expected = (pack(D) ^ pack(E)).reshape(-1)
    assert np.array_equal(out["d"], expected)


@TARGETS
def test_double_math(target):
    case, out = run("double_math", target)
    n = case["buffers"]["fin"].size
    x, f = case["buffers"]["in"], case["buffers"]["fin"]
    xs, ys = x[:n], x[n:]
    r = xs * ys + 0.5 + xs * 3.0 - ys * ys
    r = np.where(xs < ys, r, r + 1.0)
    r = np.maximum(r, -xs) + np.abs(ys) + f.astype(np.float64) * xs + np.arange(n)
    np.testing.assert_allclose(out["out"][:n], r, rtol=1e-12, atol=1e-12)
    second = (r * 0.125).astype(np.float32).astype(np.float64) + np.trunc(ys * 4.0)
    np.testing.assert_allclose(out["out"][n:], second, rtol=1e-6)


@TARGETS
def test_local_memory(target):
    case, out = run("local_memory", target)
    values, index = case["buffers"]["in"], case["buffers"]["index"]
    a = values.reshape(-1, 48).astype(np.float64) * np.arange(1, 49)
    rows = np.arange(a.shape[0])
    a[rows, index % 48] += 1
    terms = [a[rows, (k * 5 + index) % 48] * k for k in range(48)]
    scale = sum(np.abs(x) for x in terms)            # binary32 sums: error relative to the terms' size
    error = np.abs(out["out"] - (sum(terms) + a[rows, (index + 7) % 48]))
    assert (error <= 1e-6 * scale + 1e-6).all()


@TARGETS
def test_async_copy(target):
    case, out = run("async_copy", target)
    v = case["buffers"]["in"].reshape(-1, 256, 4).astype(np.float64)
    t = np.arange(128)
    want = v[:, 255 - t, 0] + 2 * v[:, 255 - t, 1] + 3 * v[:, 255 - t, 2] + 4 * v[:, 255 - t, 3] - v[:, t, 0]
    np.testing.assert_allclose(out["out"].reshape(want.shape), want, rtol=1e-5, atol=1e-5)


@TARGETS
def test_uniform_path(target):
    case, out = run("uniform_path", target)
    tile = case["buffers"]["in"].reshape(-1, 32 * 33, 2).astype(np.float64)
    stride, rows = int(case["params"][2]), int(case["params"][3])
    expected = np.zeros((tile.shape[0], 64))
    t = np.arange(64)
    for b in range(tile.shape[0]):
        for r in range(rows):
            u = tile[b, (b * stride + r * 33) % (32 * 33)]
            v = tile[b, (r * 33 + t) % (32 * 33)]
            expected[b] += u[0] * v[:, 0] + u[1] * v[:, 1]
    np.testing.assert_allclose(out["out"].reshape(expected.shape), expected, rtol=1e-5, atol=1e-5)


@TARGETS
def test_register_spills(target):
    case, out = run("register_spills", target)
    n = int(case["params"][2])
    v = case["buffers"]["in"].reshape(40, n).astype(np.float32).copy()
    acc = np.zeros(n, np.float32)
    for r in range(4):
        for k in range(40):
            v[k] = (v[k].astype(np.float64) * v[(k + r + 1) % 40] + v[(k + 3) % 40]).astype(np.float32)
            acc = (acc + v[k]).astype(np.float32)
    np.testing.assert_allclose(out["out"].reshape(40, n), v + acc, rtol=1e-4, atol=1e-4)


@TARGETS
def test_half_math(target):
    """PTX's add/mul without .rn may be contracted; ptxas -O3 fuses hadd2(r, hmul2(a, c)) into one
    HFMA2 and half_lo(r) * 1.5 + half_hi(r) into one FFMA on both targets, so the reference does too."""
    case, out = run("half_math", target)
    n = int(case["params"][3])
    words = case["buffers"]["in"]
    a, b, c = words[:n], words[n:2 * n], words[2 * n:]
    f = np.float64
    (al, ah), (bl, bh), (cl, ch) = halves(a), halves(b), halves(c)
    lanes = []
    for x, y, z in ((al, bl, cl), (ah, bh, ch)):
        r = (x.astype(f) * y + z).astype(np.float16)                       # fma.rn.f16x2
        r = (x.astype(f) * z + r).astype(np.float16)                       # add(r, mul(a, c)), fused
        r = (r.astype(f) - 0.25).astype(np.float16)
        lanes.append(np.maximum(r, -y))
    s = (lanes[0].astype(f) * 1.5 + lanes[1].astype(f)).astype(np.float32)
    h = s.astype(np.float16)
    g = (al.astype(f) + bh).astype(np.float16)                              # add.f16 of a.lo, b.hi
    assert np.array_equal(halves(out["out"])[0], h)
    assert np.array_equal(halves(out["out"])[1], g)
    assert np.array_equal(out["fout"], s + h.astype(np.float32))


@TARGETS
@pytest.mark.parametrize("name", sorted(CASES))
def test_our_assembly_of_ptxas_listing_runs_like_ptxas_cubin(target, name):
    """bobc.sass re-assembles nvdisasm's listing of ptxas's cubin (tests/sass/data/listings, committed;
    for sm_86 the only evidence short of a GPU): the simulator's outputs are the same bytes."""
    import gzip
    from bobc.sass.assembler import assemble_listing
    from bobc.sim.kernel import cubin_kernel
    listing = gzip.decompress((REPO / f"tests/sass/data/listings/corpus3.{target}.lst.gz").read_bytes()).decode()
    ours = assemble_listing(listing, target, source_name=f"corpus3.{target}.lst")[name]
    case, reference = run(name, target, seed=7)
    fresh = CASES[name](np.random.default_rng(7))
    static = cubin_kernel(corpus3(target), name).shared_bytes        # a code image declares none
    mine = run_kernel(ours.code, target, kernel_name=name, registers=ours.registers, shared_bytes=static, **fresh)
    for buffer in reference:
        assert reference[buffer].tobytes() == mine[buffer].tobytes(), buffer
