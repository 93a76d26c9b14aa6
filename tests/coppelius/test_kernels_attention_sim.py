"""coppelius-attention-forward on the functional simulator (both targets): bit for bit the three
launches it replaces -- coppelius-gemm-nt (S = q k^T per head), coppelius-softmax-forward (P, binary32
and binary16) and coppelius-gemm-nn (O = P16 v) -- run on the same simulator from the same qkv16,
with the words graph.py gave them; and within binary16's rounding of a float64 softmax-attention.

The oracle for the bits is the three kernels themselves (each checked against float64 by its own
tests: test_kernels_gemm_sim.py, test_kernels_ops_sim.py) and, on the H200, against each other again
(tests/gpu/test_coppelius_attention.py).
"""
from __future__ import annotations

import struct
from pathlib import Path

import importlib.util

import numpy as np
import pytest

from bobc.sass.generate import gemm
from bobc.sim.kernel import buffer_addresses, run_kernel
from coppelius_model import attention

REPO = Path(__file__).resolve().parents[2]
SOURCES = REPO / "examples" / "coppelius" / "Realization" / "Nvidia" / "SM86"
DH = 64


def _module(name: str):
    path = REPO / "examples" / "coppelius" / "coppelius_model" / f"{name}.py"
    spec = importlib.util.spec_from_file_location(f"coppelius_{name}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


ref_gemm = _module("ref_gemm")


def _text(name: str) -> str:
    return (SOURCES / f"coppelius-{name}.sass").read_text(encoding="utf-8")


def _inputs(T: int, H: int, seed: int) -> np.ndarray:
    """qkv16 [T, 3d]: q and k scaled so that the softmax is neither flat nor one-hot."""
    rng = np.random.default_rng(seed)
    return (rng.standard_normal((T, 3 * DH * H)) * 0.7).astype(np.float16).reshape(-1)


def three_launches(arch: str, qkv: np.ndarray, T: int, H: int, scale: float):
    """S, P16, P and O16 as the forward computed them before the fused kernel."""
    d = DH * H
    buffers = {"qkv": qkv, "scores": np.full(H * T * T, np.nan, np.float32),
               "p16": np.full(H * T * T, np.nan, np.float16), "p": np.full(H * T * T, np.nan, np.float32),
               "o16": np.full(T * d, np.nan, np.float16)}
    at = buffer_addresses(buffers)
    words = gemm.pack_parameters(A=at["qkv"], B=at["qkv"] + 2 * d, D=at["scores"], M=T, N=T, K=DH, lda=3 * d,
                                 ldb=3 * d, ldd=T, batches=H, sA=DH, sB=DH, sD=T * T)
    out = run_kernel(_text("gemm-nt"), arch, grid=gemm.grid(T, T, H), block=(gemm.THREADS, 1, 1), params=words,
                     buffers=buffers, shared_bytes=gemm.shared_bytes(gemm.VARIANTS["nt"]))
    buffers = out
    softmax = struct.pack("<QQQIIfI", at["scores"], at["p16"], at["p"], H * T, T, scale, 0)
    out = run_kernel(_text("softmax-forward"), arch, grid=(-(-H * T // 8), 1, 1), block=(256, 1, 1),
                     params=softmax, buffers=buffers)
    buffers = out
    words = gemm.pack_parameters(A=at["p16"], B=at["qkv"] + 2 * 2 * d, D=at["o16"], Dh=at["o16"], M=T, N=DH, K=T,
                                 lda=T, ldb=3 * d, ldd=d, ldh=d, flags=gemm.FLAG_HALF | gemm.FLAG_NO_D,
                                 batches=H, sA=T * T, sB=DH, sD=DH, sH=DH)
    return run_kernel(_text("gemm-nn"), arch, grid=gemm.grid(T, DH, H), block=(gemm.THREADS, 1, 1), params=words,
                      buffers=buffers, shared_bytes=gemm.shared_bytes(gemm.VARIANTS["nn"]))


def fused(arch: str, qkv: np.ndarray, T: int, H: int, scale: float):
    d = DH * H
    buffers = {"qkv": qkv, "p16": np.full(H * T * T, np.nan, np.float16), "p": np.full(H * T * T, np.nan, np.float32),
               "o16": np.full(T * d, np.nan, np.float16)}
    at = buffer_addresses(buffers)
    words = struct.pack("<QQQQIIfI", at["qkv"], at["p16"], at["p"], at["o16"], T, H, scale, 0)
    return run_kernel(_text("attention-forward"), arch, grid=(T // 32, H, 1), block=(attention.BLOCKS[attention.KERNEL], 1, 1),
                      params=words, buffers=buffers, shared_bytes=100352)


def float64_attention(qkv: np.ndarray, p16: np.ndarray, T: int, H: int, scale: float):
    """float64 P from qkv16; float64 O from the kernel's own P16 (its rounding of P is checked
    through P) with ref_gemm's bound for K = T binary32 additions, plus binary16's rounding."""
    d = DH * H
    x = qkv.astype(np.float64).reshape(T, 3 * d)
    p16 = p16.astype(np.float64).reshape(H, T, T)
    p, o, bound = np.zeros((H, T, T)), np.zeros((T, d)), np.zeros((T, d))
    mask = np.triu(np.ones((T, T), bool), 1)
    for h in range(H):
        q, k, v = (x[:, part * d + h * DH: part * d + (h + 1) * DH] for part in range(3))
        s = np.where(mask, -np.inf, scale * (q @ k.T))
        e = np.exp(s - s.max(axis=1, keepdims=True))
        p[h] = e / e.sum(axis=1, keepdims=True)
        columns = slice(h * DH, (h + 1) * DH)
        o[:, columns] = p16[h] @ v
        bound[:, columns] = ref_gemm.error_bound(np.abs(p16[h]) @ np.abs(v), T, o[:, columns])
    return p, o, bound + 2.0 ** -11 * np.abs(o) + 2.0 ** -25


CASES = [("sm_86", 128, 2), ("sm_90", 128, 2), ("sm_86", 256, 1), ("sm_90", 256, 1), ("sm_90", 512, 1)]


@pytest.mark.parametrize("arch,T,H", CASES, ids=[f"{a}-T{t}-H{h}" for a, t, h in CASES])
def test_fused_attention_forward_is_the_three_launches_bit_for_bit(arch, T, H):
    scale = float(np.float32(DH ** -0.5))
    qkv = _inputs(T, H, seed=T + H)
    before = three_launches(arch, qkv, T, H, scale)
    after = fused(arch, qkv, T, H, scale)
    for name in ("p16", "p", "o16"):
        same = before[name].view(np.uint8) == after[name].view(np.uint8)
        assert same.all(), f"{name}: {np.count_nonzero(~same)} bytes differ"
    # and the result is attention: P within binary32 of float64, O within binary16's rounding of
    # float64's P16 v (K = T binary32 additions of exact products)
    p, o, bound = float64_attention(qkv, after["p16"], T, H, scale)
    assert np.abs(after["p"].astype(np.float64).reshape(H, T, T) - p).max() < 1e-5
    assert (after["p"].reshape(H, T, T)[:, np.triu(np.ones((T, T), bool), 1)] == 0).all()
    assert np.all(np.abs(after["p16"].astype(np.float64) - after["p"]) <= 2.0 ** -11 * after["p"] + 2.0 ** -25)
    error = np.abs(after["o16"].astype(np.float64).reshape(T, DH * H) - o)
    assert (error <= bound).all(), np.argwhere(error > bound)[:5]


def _probabilities(T: int, H: int, rng) -> np.ndarray:
    """Causal softmax rows (binary32, exactly 0 past the query), as the forward writes P."""
    s = rng.standard_normal((H, T, T)) * 1.5
    s = np.where(np.triu(np.ones((T, T), bool), 1), -np.inf, s)
    e = np.exp(s - s.max(axis=2, keepdims=True))
    return (e / e.sum(axis=2, keepdims=True)).astype(np.float32).reshape(-1)


def backward_three_launches(arch: str, qkv, do, p, T: int, H: int, scale: float):
    """dS, dq (binary32 and binary16) as the backward computed them before the fused kernel."""
    d = DH * H
    buffers = {"qkv": qkv, "do": do, "p": p, "dp": np.full(H * T * T, np.nan, np.float32),
               "ds": np.full(H * T * T, np.nan, np.float16), "dqkv": np.full(T * 3 * d, np.nan, np.float32),
               "dqkv16": np.full(T * 3 * d, np.nan, np.float16)}
    at = buffer_addresses(buffers)
    words = gemm.pack_parameters(A=at["do"], B=at["qkv"] + 4 * d, D=at["dp"], M=T, N=T, K=DH, lda=d, ldb=3 * d,
                                 ldd=T, batches=H, sA=DH, sB=DH, sD=T * T)
    buffers = run_kernel(_text("gemm-nt"), arch, grid=gemm.grid(T, T, H), block=(gemm.THREADS, 1, 1), params=words,
                         buffers=buffers, shared_bytes=gemm.shared_bytes(gemm.VARIANTS["nt"]))
    softmax = struct.pack("<QQQIIfI", at["p"], at["dp"], at["ds"], H * T, T, scale, 0)
    buffers = run_kernel(_text("softmax-backward"), arch, grid=(-(-H * T // 8), 1, 1), block=(256, 1, 1),
                         params=softmax, buffers=buffers)
    words = gemm.pack_parameters(A=at["ds"], B=at["qkv"] + 2 * d, D=at["dqkv"], Dh=at["dqkv16"], M=T, N=DH, K=T,
                                 lda=T, ldb=3 * d, ldd=3 * d, ldh=3 * d, flags=gemm.FLAG_HALF, batches=H,
                                 sA=T * T, sB=DH, sD=DH, sH=DH)
    return run_kernel(_text("gemm-nn"), arch, grid=gemm.grid(T, DH, H), block=(gemm.THREADS, 1, 1), params=words,
                      buffers=buffers, shared_bytes=gemm.shared_bytes(gemm.VARIANTS["nn"]))


def backward_fused(arch: str, qkv, do, p, T: int, H: int, scale: float):
    d = DH * H
    buffers = {"qkv": qkv, "do": do, "p": p, "ds": np.full(H * T * T, np.nan, np.float16),
               "dqkv": np.full(T * 3 * d, np.nan, np.float32), "dqkv16": np.full(T * 3 * d, np.nan, np.float16)}
    at = buffer_addresses(buffers)
    words = struct.pack("<6QIIfI", at["qkv"], at["do"], at["p"], at["ds"], at["dqkv"], at["dqkv16"], T, H, scale, 0)
    return run_kernel(_text("attention-backward"), arch, grid=(T // 32, H, 1), block=(attention.BLOCKS[attention.BACKWARD], 1, 1),
                      params=words, buffers=buffers, shared_bytes=100352)


@pytest.mark.parametrize("arch,T,H", CASES, ids=[f"{a}-T{t}-H{h}" for a, t, h in CASES])
def test_fused_attention_backward_is_the_three_launches_bit_for_bit(arch, T, H):
    """dS and dq's columns bit for bit; the rest of dqkv (k's and v's columns, other launches')
    untouched by both; dS within binary16's rounding of float64's scale P (dP - rowsum(P dP))."""
    rng = np.random.default_rng(7 * T + H)
    scale = float(np.float32(DH ** -0.5))
    qkv = _inputs(T, H, seed=T * 3 + H)
    do = (rng.standard_normal(T * DH * H) * 0.5).astype(np.float16)
    p = _probabilities(T, H, rng)
    before = backward_three_launches(arch, qkv, do, p, T, H, scale)
    after = backward_fused(arch, qkv, do, p, T, H, scale)
    for name in ("ds", "dqkv", "dqkv16"):
        same = before[name].view(np.uint8) == after[name].view(np.uint8)
        assert same.all(), f"{name}: {np.count_nonzero(~same)} bytes differ"
    d = DH * H
    assert np.isnan(after["dqkv"].reshape(T, 3 * d)[:, d:]).all()       # k's and v's columns left alone
    x = qkv.astype(np.float64).reshape(T, 3 * d)
    for h in range(H):
        v = x[:, 2 * d + h * DH: 2 * d + (h + 1) * DH]
        dp = do.astype(np.float64).reshape(T, d)[:, h * DH:(h + 1) * DH] @ v.T
        ph = p.astype(np.float64).reshape(H, T, T)[h]
        ds = scale * ph * (dp - (ph * dp).sum(axis=1, keepdims=True))
        got = after["ds"].astype(np.float64).reshape(H, T, T)[h]
        assert np.all(np.abs(got - ds) <= 2.0 ** -11 * np.abs(ds) + 2.0 ** -24 + 1e-5 * np.abs(dp).max())


def kv_two_launches(arch: str, qkv, do, p16, ds, T: int, H: int):
    """dqkv and dqkv16 after graph.py's two tn products: dv = p16^T do16, dk = ds16^T q (per head)."""
    d = DH * H
    buffers = {"qkv": qkv, "do": do, "p16": p16, "ds": ds, "dqkv": np.full(T * 3 * d, np.nan, np.float32),
               "dqkv16": np.full(T * 3 * d, np.nan, np.float16)}
    at = buffer_addresses(buffers)
    for A, B, ldb, column in ((at["p16"], at["do"], d, 2 * d), (at["ds"], at["qkv"], 3 * d, d)):
        words = gemm.pack_parameters(A=A, B=B, D=at["dqkv"] + 4 * column, Dh=at["dqkv16"] + 2 * column, M=T, N=DH,
                                     K=T, lda=T, ldb=ldb, ldd=3 * d, ldh=3 * d, flags=gemm.FLAG_HALF, batches=H,
                                     sA=T * T, sB=DH, sD=DH, sH=DH)
        buffers = run_kernel(_text("gemm-tn"), arch, grid=gemm.grid(T, DH, H), block=(gemm.THREADS, 1, 1),
                             params=words, buffers=buffers, shared_bytes=gemm.shared_bytes(gemm.VARIANTS["tn"]))
    return buffers


def kv_fused(arch: str, qkv, do, p16, ds, T: int, H: int, scale: float):
    d = DH * H
    buffers = {"qkv": qkv, "do": do, "p16": p16, "ds": ds, "dqkv": np.full(T * 3 * d, np.nan, np.float32),
               "dqkv16": np.full(T * 3 * d, np.nan, np.float16)}
    at = buffer_addresses(buffers)
    words = struct.pack("<6QIIfI", at["qkv"], at["do"], at["p16"], at["ds"], at["dqkv"], at["dqkv16"], T, H, scale, 0)
    return run_kernel(_text("attention-backward-kv"), arch, grid=(T // 32, H, 1), block=(attention.BLOCKS[attention.KV], 1, 1),
                      params=words, buffers=buffers, shared_bytes=50176)


KV_CASES = [("sm_86", 128, 2), ("sm_90", 128, 2), ("sm_86", 256, 1), ("sm_90", 256, 1), ("sm_86", 512, 1),
            ("sm_90", 512, 1)]


@pytest.mark.parametrize("arch,T,H", KV_CASES, ids=[f"{a}-T{t}-H{h}" for a, t, h in KV_CASES])
def test_fused_attention_backward_kv_is_the_two_products_bit_for_bit(arch, T, H):
    """dqkv and dqkv16 whole (NaN-filled: q's columns untouched by both) bit for bit; dv and dk
    within ref_gemm's bound of float64's P16^T dO and dS^T q (K = T binary32 additions)."""
    rng = np.random.default_rng(11 * T + H)
    scale = float(np.float32(DH ** -0.5))
    d = DH * H
    qkv = _inputs(T, H, seed=T * 5 + H)
    do = (rng.standard_normal(T * d) * 0.5).astype(np.float16)
    p16 = _probabilities(T, H, rng).astype(np.float16)
    # dS as the softmax backward leaves it: 0 past the query, mixed signs (and some -0) before it
    ds = np.where(np.triu(np.ones((T, T), bool), 1), 0.0, rng.standard_normal((H, T, T)) * 0.01)
    ds = ds.astype(np.float16).reshape(-1)
    ds[rng.random(ds.size) < 0.01] = np.float16(-0.0)
    before = kv_two_launches(arch, qkv, do, p16, ds, T, H)
    after = kv_fused(arch, qkv, do, p16, ds, T, H, scale)
    for name in ("dqkv", "dqkv16"):
        same = before[name].view(np.uint8) == after[name].view(np.uint8)
        assert same.all(), f"{name}: {np.count_nonzero(~same)} bytes differ"
    got = after["dqkv"].astype(np.float64).reshape(T, 3 * d)
    assert np.isnan(got[:, :d]).all() and not np.isnan(got[:, d:]).any()      # q's columns left alone
    assert np.all(after["dqkv16"].reshape(T, 3 * d)[:, d:] == got[:, d:].astype(np.float16))
    x = qkv.astype(np.float64).reshape(T, 3 * d)
    dof = do.astype(np.float64).reshape(T, d)
    for h in range(H):
        columns = slice(h * DH, (h + 1) * DH)
        ph = p16.astype(np.float64).reshape(H, T, T)[h]
        dsh = ds.astype(np.float64).reshape(H, T, T)[h]
        q = x[:, columns]
        for exact, magnitude, column in ((ph.T @ dof[:, columns], np.abs(ph.T) @ np.abs(dof[:, columns]), 2 * d),
                                         (dsh.T @ q, np.abs(dsh.T) @ np.abs(q), d)):
            bound = ref_gemm.error_bound(magnitude, T, exact)
            error = np.abs(got[:, column + h * DH: column + (h + 1) * DH] - exact)
            assert (error <= bound).all(), np.argwhere(error > bound)[:5]
