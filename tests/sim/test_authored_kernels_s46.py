"""Six kernels written by hand from the docs alone (probe s46 kernelauthor2), one source for sm_86
and sm_90 each (shared memory from 0x400; the histogram's global reduction is RED on sm_86 and
REDG on sm_90, so it has a variant), scheduled by bobc, assembled as a plan's kernel is
(assemble_kernel: its end and budget checked), and run in the simulator held to their contracts
(run_kernel contract=True) against NumPy oracles: float64, and, where the kernel's order of
operations is fixed, a NumPy emulation of that order whose bits must match.  The inputs are the
edges: a size not a multiple of the block or smaller than a warp, 1 x 1, ragged tiles, -inf,
rows of equal values, +-1e30, binary16 overflow, inf - inf, subnormal products, u32 wrap-around."""
from pathlib import Path

import numpy as np
import pytest

from bobc.kernel_search import find_source
from bobc.sass.assembler import assemble_kernel
from bobc.sim.kernel import Pointer, run_kernel
from bobc.targets import TARGETS as KNOWN

HERE = Path(__file__).parent / "authored"
TARGETS = pytest.mark.parametrize("target", ["sm_86", "sm_90"])


def _source(stem: str, target: str) -> Path:
    found = find_source(stem, [HERE], KNOWN[target])
    assert found is not None
    return found


def _run(stem, target, grid, block, params, buffers):
    source = _source(stem, target)
    assemble_kernel(source, KNOWN[target])           # a plan's kernel: ends with EXIT, fits its .registers
    return run_kernel(source, target, grid=grid, block=block, params=params, buffers=buffers, contract=True)


def _butterfly(values):
    """SHFL.BFLY 16, 8, 4, 2, 1 then FADD (other + own) over the last axis of 32 lanes: lane 0's sum."""
    v = values.astype(np.float32)
    for distance in (16, 8, 4, 2, 1):
        v = (v[..., np.arange(32) ^ distance] + v).astype(np.float32)
    return v[..., 0]


@TARGETS
@pytest.mark.parametrize("n", [1, 31, 256, 257, 1000])
def test_block_sum_s46(target, n):
    blocks = -(-n // 256)
    x = np.random.default_rng(n).standard_normal(n).astype(np.float32)
    out = _run("block-sum", target, blocks, 256, [Pointer("x"), Pointer("o"), np.uint32(n)],
               {"x": x, "o": np.full(blocks, np.nan, np.float32)})["o"]
    padded = np.zeros(256 * blocks, np.float32)
    padded[:n] = x
    warps = _butterfly(padded.reshape(blocks, 8, 32))
    exact = _butterfly(np.concatenate([warps, np.zeros((blocks, 24), np.float32)], axis=1))
    assert (out.view(np.uint32) == exact.view(np.uint32)).all()
    f64 = padded.astype(np.float64).reshape(blocks, 256).sum(axis=1)
    assert np.allclose(out, f64, rtol=1e-5, atol=1e-4)


@TARGETS
@pytest.mark.parametrize("n", [1, 33, 256, 700])
def test_block_scan_wraps_s46(target, n):
    blocks = -(-n // 256)
    x = np.random.default_rng(n).integers(0, 2 ** 32, n, dtype=np.uint64).astype(np.uint32)
    x[:min(n, 5)] = 0xFFFFFFFF
    out = _run("block-scan", target, blocks, 256, [Pointer("x"), Pointer("o"), np.uint32(n)],
               {"x": x, "o": np.full(n + 3, 7, np.uint32)})["o"]
    expected = [sum(int(v) for v in x[256 * (i // 256):i + 1]) % 2 ** 32 for i in range(n)]
    assert out[:n].tolist() == expected
    assert (out[n:] == 7).all()


@TARGETS
@pytest.mark.parametrize("rows, cols", [(1, 1), (33, 31), (5, 70), (64, 40)])
def test_transpose_s46(target, rows, cols):
    x = np.random.default_rng(rows * cols).standard_normal((rows, cols)).astype(np.float32)
    words = np.uint64(rows) | np.uint64(cols) << np.uint64(32)
    out = _run("transpose", target, (-(-cols // 32), -(-rows // 32)), (32, 8),
               [Pointer("x"), Pointer("o"), words], {"x": x, "o": np.full((cols, rows), np.nan, np.float32)})["o"]
    assert (out.view(np.uint32) == x.T.view(np.uint32)).all()


@TARGETS
@pytest.mark.parametrize("n", [1, 256, 1000])
def test_histogram_s46(target, n):
    rng = np.random.default_rng(n)
    x = rng.integers(0, 2 ** 32, n, dtype=np.uint64).astype(np.uint32)
    x[:n // 3] = 5                                   # many lanes of one warp on one bin
    before = rng.integers(0, 1000, 64).astype(np.uint32)
    out = _run("histogram", target, -(-n // 256), 256, [Pointer("x"), Pointer("h"), np.uint32(n)],
               {"x": x, "h": before.copy()})["h"]
    assert (out == before + np.bincount(x & 63, minlength=64)).all()


@TARGETS
@pytest.mark.parametrize("rows, pairs", [(1, 1), (5, 0), (130, 5)])
def test_gemv_half_pairs_s46(target, rows, pairs):
    rng = np.random.default_rng(rows + pairs)
    a = rng.standard_normal((rows, 2 * pairs)).astype(np.float16)
    x = rng.standard_normal(2 * pairs).astype(np.float16)
    edges = rows > 4 and pairs >= 2
    if edges:
        a[1, :] = 60000                                  # every product and sum overflows to +inf
        x[:] = np.abs(x) + np.float16(1)
        a[2, 0], a[2, 1] = np.inf, -np.inf               # the halves' sum inf - inf: NaN
        a[3, :2], a[3, 2:], x[:2] = 2.0 ** -14, 0, 2.0 ** -10   # two products of 2^-24, binary16's least subnormal
    words = np.uint64(rows) | np.uint64(pairs) << np.uint64(32)
    y = _run("gemv-half-pairs", target, -(-rows // 128), 128, [Pointer("a"), Pointer("x"), Pointer("y"), words],
             {"a": a, "x": x, "y": np.full(rows, -7, np.float32)})["y"]
    # each half's accumulator: the exact a * b + acc (binary64 holds it: these operands are within 2^40 of
    # each other) rounded once to binary16, as HFMA2; then the two halves added in binary16 (HADD2)
    with np.errstate(over="ignore", invalid="ignore"):
        expected = np.empty(rows, np.float32)
        for r in range(rows):
            acc = [np.float16(0), np.float16(0)]
            for k in range(pairs):
                for h in (0, 1):
                    acc[h] = np.float16(float(a[r, 2 * k + h]) * float(x[2 * k + h]) + float(acc[h]))
            expected[r] = np.float16(float(acc[0]) + float(acc[1]))
    same = (y.view(np.uint32) == expected.view(np.uint32)) | (np.isnan(y) & np.isnan(expected))
    assert same.all()
    if edges:
        assert y[1] == np.inf and np.isnan(y[2]) and y[3] == 2.0 ** -23     # one 2^-24 a half
    with np.errstate(invalid="ignore"):
        f64 = (a.astype(np.float64).reshape(rows, pairs, 2) * x.astype(np.float64).reshape(pairs, 2)).sum(axis=(1, 2))
    finite = np.abs(f64) < 100
    assert np.allclose(y[finite], f64[finite], atol=0.01 * max(pairs, 1), rtol=0.01)


@TARGETS
@pytest.mark.parametrize("rows, cols", [(1, 1), (3, 33), (3, 100)])
def test_row_softmax_s46(target, rows, cols):
    x = (np.random.default_rng(cols).standard_normal((rows, cols)) * 10).astype(np.float32)
    x[0, 0] = -np.inf                                # exp2(-inf) = 0 (all of a 1 x 1 row: NaN, as NumPy's)
    if rows > 2:
        x[1, :] = 3.0                                # equal values: 1 / cols each
        x[2, :] = 1e30
        x[2, -1] = -1e30                             # exp of -2e30 underflows to 0
    words = np.uint64(rows) | np.uint64(cols) << np.uint64(32)
    out = _run("row-softmax", target, rows, 32, [Pointer("x"), Pointer("o"), words],
               {"x": x, "o": np.full((rows, cols), -1, np.float32)})["o"]
    wide = x.astype(np.float64)
    with np.errstate(invalid="ignore"):
        e = np.exp(wide - wide.max(axis=1, keepdims=True))
        expected = e / e.sum(axis=1, keepdims=True)
    # MUFU.EX2 of (x - max) * log2(e) rounded to binary32: its relative error grows with |x - max|
    # (2^-24 of the argument, times ln 2), plus EX2's, RCP's and the sum's few ulps
    with np.errstate(invalid="ignore"):
        span = np.nan_to_num(np.abs(wide - wide.max(axis=1, keepdims=True)) * np.log2(np.e), posinf=0)
    bound = 2.0 ** -21 * (4 + span) * np.abs(expected) + 1e-38
    ok = (np.abs(out - expected) <= bound) | (np.isnan(out) & np.isnan(expected))
    assert ok.all()
    if rows > 2:
        assert (out[1] == np.float32(1 / cols)).all() or np.allclose(out[1], 1 / cols, rtol=1e-6)
        assert out[2, -1] == 0
