"""Bob's four kernels on a real GPU, loaded from our own cubins through CuPy (no ptxas involved).

Each kernel source (specs/Realization/Nvidia/SM86/*.sass) is assembled for the GPU's
architecture, wrapped by bobc.sass.cubin.write_cubin, loaded with cupy.RawModule and
launched with its parameter words; results are compared with NumPy float64 math
(tolerances stated per test) and with the independent PyTorch case in
shared/data/bob-reference.

On the device machine (CuPy there; shared/ reachable through BOBC_SHARED):
    BOBC_SHARED=<copy of shared> PYTHONPATH=compiler python3 -m pytest tests/gpu/test_kernels.py
Ran on the H200 (driver 580): 8 passed.  BOBC_CUBIN_DIR=<dir> keeps the cubins.
"""
from __future__ import annotations

import os
import struct
from pathlib import Path

import numpy as np
import pytest

pytestmark = pytest.mark.gpu

REPO = Path(__file__).resolve().parents[2]
KERNELS = REPO / "specs" / "Realization" / "Nvidia" / "SM86"
cp = pytest.importorskip("cupy")


def reference_folder(shared):
    """The PyTorch case: BOB_REFERENCE_DATA (the device run carries it) or ../shared."""
    import os
    from pathlib import Path

    named = os.environ.get("BOB_REFERENCE_DATA")
    return Path(named) if named else shared / "data" / "bob-reference"

LOG2E = np.float32(1.4426950408889634)
LN2 = np.float32(0.6931471805599453)
INV_ROWS = np.float32(1.0 / 256)


_CACHE = {}


def kernel(name, target, parameter_words, block_x, tmp_path_factory):
    from bobc.sass import assemble_kernel
    from bobc.sass.cubin import write_cubin
    key = (name, target.name)
    if key not in _CACHE:
        assembled = assemble_kernel(KERNELS / f"{name}.sass", target)
        path = tmp_path_factory.mktemp("cubin") / f"{name}.{target.name}.cubin"
        image = write_cubin(assembled, assembled.kernel_name, target, 8 * parameter_words, block_x,
                            style=os.environ.get("BOBC_CUBIN_STYLE", "minimal"))
        path.write_bytes(image)
        if os.environ.get("BOBC_CUBIN_DIR"):   # keep the images for inspection
            (Path(os.environ["BOBC_CUBIN_DIR"]) / path.name).write_bytes(image)
        module = cp.RawModule(path=str(path))
        _CACHE[key] = (module, module.get_function(assembled.kernel_name))
    return _CACHE[key][1]


def words(*values) -> tuple:
    """Parameter words as the kernels read them: each an 8-byte little-endian word."""
    out = []
    for v in values:
        if isinstance(v, cp.ndarray):
            out.append(np.uint64(v.data.ptr))
        elif isinstance(v, bytes):
            out.append(np.frombuffer(v, dtype=np.uint64)[0])
        else:
            out.append(np.uint64(v))
    return tuple(out)


def f32pair(a, b) -> bytes:
    return struct.pack("<ff", float(a), float(b))


# -- bob-row-gather ---------------------------------------------------------------

def run_gather(P, byte, target, tmp_path_factory):
    fn = kernel("bob-row-gather", target, 3, 64, tmp_path_factory)
    dP = cp.asarray(P.reshape(-1))
    dbyte = cp.asarray(np.array([byte], dtype=np.uint32))
    out = cp.full(256, np.nan, dtype=cp.float32)
    fn((1,), (64,), words(out, dbyte, dP))
    cp.cuda.Device().synchronize()
    return out.get()


def test_row_gather_copies_the_row_exactly(target, tmp_path_factory):
    rng = np.random.default_rng(1)
    P = rng.standard_normal((256, 256)).astype(np.float32)
    for byte in (0, 97, 255):
        np.testing.assert_array_equal(run_gather(P, byte, target, tmp_path_factory), P[byte])


# -- bob-loss-gradient -------------------------------------------------------------

def loss_reference(P, targets):
    W = P.astype(np.float64)
    m = W.max(axis=1, keepdims=True)
    e = np.exp(W - m)
    s = e.sum(axis=1, keepdims=True)
    # log(s) - (W[t] - m), not (m + log(s)) - W[t]: the latter loses log(s) when |m| is
    # huge (a constant row of -8e37 has loss ln 256, not 0)
    loss = np.log(s)[:, 0] - (W[np.arange(256), targets] - m[:, 0])
    G = e / s
    G[np.arange(256), targets] -= 1.0
    return loss, G / 256.0


def run_loss(P, targets, target, tmp_path_factory):
    fn = kernel("bob-loss-gradient", target, 8, 256, tmp_path_factory)
    dP = cp.asarray(P.reshape(-1).astype(np.float32))
    dG = cp.full(65536, np.nan, dtype=cp.float32)
    dT = cp.asarray(targets.astype(np.uint32))
    dL = cp.full(256, np.nan, dtype=cp.float32)
    fn((1,), (256,), words(dP, dG, dT, dL, 0, 0, f32pair(LOG2E, LN2), f32pair(INV_ROWS, 0)))
    cp.cuda.Device().synchronize()
    return dL.get(), dG.get().reshape(256, 256)


def test_loss_and_gradient_random_and_edge_rows(target, tmp_path_factory):
    rng = np.random.default_rng(2)
    P = (rng.standard_normal((256, 256)) * 3).astype(np.float32)
    P[1] = 0.0                                   # all ties
    P[2, :] = -1e30; P[2, 7] = 1e30              # huge spread: no overflow
    P[3] = -8e37                                 # very negative, constant
    P[4] = rng.standard_normal(256).astype(np.float32) * 80   # wide range
    P[5, 10] = 60.0
    targets = rng.integers(0, 256, 256).astype(np.uint32)
    targets[2] = 7
    loss, G = run_loss(P, targets, target, tmp_path_factory)
    want_loss, want_G = loss_reference(P, targets)
    assert np.all(np.isfinite(loss)) and np.all(np.isfinite(G))
    # tolerance: MUFU.EX2/LG2/RCP are approximations (~2^-21 relative); losses relative 1e-5
    # plus 2e-5 absolute, gradients 2e-9 absolute (they are scaled by 1/256) plus 1e-4 relative
    np.testing.assert_allclose(loss, want_loss, rtol=1e-5, atol=2e-5)
    np.testing.assert_allclose(G, want_G, rtol=1e-4, atol=2e-9)


def test_initial_loss_matches_the_pytorch_case(target, tmp_path_factory, shared):
    case = np.load(reference_folder(shared) / "case.npz")
    expected = np.load(reference_folder(shared) / "expected-1.npz")
    loss, _ = run_loss(case["P"].reshape(256, 256), case["targets"], target, tmp_path_factory)
    np.testing.assert_allclose(loss, expected["initial_loss"], rtol=1e-4, atol=1e-5)


# -- bob-adamw ---------------------------------------------------------------------

LR, BETA1, BETA2, EPS, WD = (np.float32(x) for x in (0.1, 0.9, 0.999, 1e-8, 0.01))


def adamw_block(step: int) -> bytes:
    b1, b2, lr, eps = float(BETA1), float(BETA2), float(LR), float(EPS)
    alpha = np.float32(lr * np.sqrt(1 - b2 ** step) / (1 - b1 ** step))
    eps_t = np.float32(eps * np.sqrt(1 - b2 ** step))
    decay = np.float32(1 - float(LR) * float(WD))
    return struct.pack("<fffffffII", alpha, eps_t, decay, BETA1, np.float32(1 - BETA1), BETA2,
                       np.float32(1 - BETA2), 65536, step) + bytes(4)


def adamw_reference(P, G, M, V, step):
    """torch.optim.AdamW's math in float64 (decoupled decay, bias correction)."""
    p, g, m, v = (x.astype(np.float64) for x in (P, G, M, V))
    b1, b2 = float(BETA1), float(BETA2)
    p = p * (1 - float(LR) * float(WD))
    m = b1 * m + (1 - b1) * g
    v = b2 * v + (1 - b2) * g * g
    denom = np.sqrt(v) / np.sqrt(1 - b2 ** step) + float(EPS)
    p = p - float(LR) / (1 - b1 ** step) * m / denom
    return p, m, v


def run_adamw(P, G, M, V, step, target, tmp_path_factory):
    fn = kernel("bob-adamw", target, 9, 256, tmp_path_factory)
    d = [cp.asarray(x.astype(np.float32)) for x in (P, G, M, V)]
    block = adamw_block(step)
    scalars = [block[i:i + 8] for i in range(0, 40, 8)]
    fn((256,), (256,), words(*d, *scalars))
    cp.cuda.Device().synchronize()
    return [x.get() for x in d]


@pytest.mark.parametrize("step", [1, 7, 1000])
def test_adamw_matches_float64_torch_semantics(step, target, tmp_path_factory):
    rng = np.random.default_rng(step)
    P = (rng.standard_normal(65536) * 0.01).astype(np.float32)
    G = (rng.standard_normal(65536) * 1e-3).astype(np.float32)
    G[:1000] = 0.0                                   # zero gradients
    M = (rng.standard_normal(65536) * 1e-3).astype(np.float32)
    V = (rng.random(65536) * 1e-6).astype(np.float32)
    V[:500] = 0.0; M[:500] = 0.0                     # fresh state with zero gradient
    p, g, m, v = run_adamw(P, G, M, V, step, target, tmp_path_factory)
    want_p, want_m, want_v = adamw_reference(P, G, M, V, step)
    np.testing.assert_array_equal(g, G)              # G is read only
    # tolerance: binary32 arithmetic with MUFU.SQRT/RCP (~2^-21 relative) against float64
    np.testing.assert_allclose(m, want_m, rtol=1e-5, atol=1e-10)
    np.testing.assert_allclose(v, want_v, rtol=1e-5, atol=1e-15)
    np.testing.assert_allclose(p, want_p, rtol=1e-5, atol=2e-7)
    np.testing.assert_array_equal(p[:500], (P[:500] * np.float32(1 - LR * WD)).astype(np.float32))


# -- bob-greedy-argmax -------------------------------------------------------------

def run_argmax(row, target, tmp_path_factory):
    fn = kernel("bob-greedy-argmax", target, 2, 1, tmp_path_factory)
    out = cp.full(2, 0xDEADBEEF, dtype=cp.uint32)
    drow = cp.asarray(row.astype(np.float32))
    fn((1,), (1,), words(out, drow))
    cp.cuda.Device().synchronize()
    return tuple(int(x) for x in out.get())


def test_argmax_first_maximum_and_validity(target, tmp_path_factory):
    rng = np.random.default_rng(4)
    for _ in range(5):
        row = rng.standard_normal(256).astype(np.float32)
        assert run_argmax(row, target, tmp_path_factory) == (int(np.argmax(row)), 1)
    tie = np.zeros(256, np.float32); tie[[17, 40, 200]] = 3.0
    assert run_argmax(tie, target, tmp_path_factory) == (17, 1)
    assert run_argmax(np.zeros(256, np.float32), target, tmp_path_factory) == (0, 1)
    last = np.full(256, -1e38, np.float32); last[255] = -1e37
    assert run_argmax(last, target, tmp_path_factory) == (255, 1)
    for bad in (np.nan, np.inf, -np.inf):
        row = rng.standard_normal(256).astype(np.float32); row[123] = bad
        assert run_argmax(row, target, tmp_path_factory) == (0, 0)


# -- the whole invocation against the PyTorch case ------------------------------------

def test_ten_updates_match_the_pytorch_case(target, tmp_path_factory, shared):
    case = np.load(reference_folder(shared) / "case.npz")
    expected = np.load(reference_folder(shared) / "expected-1.npz")
    P, M, V = case["P"].copy(), case["M"].copy(), case["V"].copy()
    targets = case["targets"]
    before = [run_argmax(P.reshape(256, 256)[b], target, tmp_path_factory) for b in case["prompts"]]
    assert [t for t, _ in before] == list(expected["tokens_before"])
    loss, G = run_loss(P.reshape(256, 256), targets, target, tmp_path_factory)
    for step in range(1, 11):
        P, _, M, V = run_adamw(P, G.reshape(-1), M, V, step, target, tmp_path_factory)
        loss, G = run_loss(P.reshape(256, 256), targets, target, tmp_path_factory)
    np.testing.assert_allclose(loss, expected["training_loss"], rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(P, expected["P"], rtol=1e-4, atol=1e-6)
    np.testing.assert_allclose(M, expected["M"], rtol=1e-4, atol=1e-8)
    np.testing.assert_allclose(V, expected["V"], rtol=1e-4, atol=1e-10)
    rows = [run_gather(P.reshape(256, 256), int(b), target, tmp_path_factory) for b in case["prompts"]]
    np.testing.assert_allclose(np.stack(rows), expected["logit_rows"], rtol=1e-4, atol=1e-6)
    after = [run_argmax(r, target, tmp_path_factory) for r in rows]
    assert [t for t, _ in after] == list(expected["tokens"])
    assert [v for _, v in after] == list(expected["valid"])
