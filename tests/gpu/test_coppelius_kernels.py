"""Coppelius's non-GEMM kernels on a real GPU, from our own cubins through CuPy (no ptxas): each
source (examples/coppelius/Realization/Nvidia/SM86/coppelius-*.sass) is assembled for the GPU's
architecture, wrapped by bobc.sass.cubin.write_cubin and launched with its parameter block at
the small (T 128, C 256, 4 heads) and the large (T 256, C 768, 12 heads) configuration, then
compared with NumPy float64 (examples/coppelius/coppelius_model/ref_ops.py and the formulas here).

Tolerances: as tests/coppelius/test_kernels_ops_sim.py (binary16 outputs: half an ulp, 2^-11
relative, plus the binary32 computation's bound), with the binary32 part 4x wider here: the GPU's
MUFU.EX2/RCP/RSQ/SQRT/LG2 are within 1-2 ulp of the correctly rounded results the simulator
uses (PTX ISA, the .approx instructions).  Each kernel's time (CUDA events, the median of 20
launches) is printed for bench notes; nothing is asserted about it.

On the device machine:  PYTHONPATH=compiler python3 -m pytest -m gpu tests/gpu/test_coppelius_kernels.py -v -s
"""
from __future__ import annotations

import importlib.util
import struct
from pathlib import Path

import numpy as np
import pytest

pytestmark = pytest.mark.gpu

REPO = Path(__file__).resolve().parents[2]
SOURCES = REPO / "examples" / "coppelius" / "Realization" / "Nvidia" / "SM86"
cp = pytest.importorskip("cupy")

CONFIGS = {"small": dict(T=128, C=256, H=4), "large": dict(T=256, C=768, H=12)}


def _load_ref():
    spec = importlib.util.spec_from_file_location("coppelius_ref_ops",
                                                  REPO / "examples/coppelius/coppelius_model/ref_ops.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


ref = _load_ref()


_CACHE = {}


class Pointer:
    def __init__(self, array):
        self.array = array


def block_of(params) -> bytes:
    """The parameter block: a cupy array -> its 8-byte address, np.uint32/np.float32 -> 4 bytes
    (two share a word, low half first), aligned as CUDA aligns them."""
    out = bytearray()
    for p in params:
        if isinstance(p, cp.ndarray):
            out += bytes((-len(out)) % 8) + struct.pack("<Q", p.data.ptr)
        elif isinstance(p, np.uint64):
            out += bytes((-len(out)) % 8) + struct.pack("<Q", int(p))
        elif isinstance(p, np.uint32):
            out += struct.pack("<I", int(p))
        elif isinstance(p, np.float32):
            out += struct.pack("<f", float(p))
        else:
            raise TypeError(type(p))
    out += bytes((-len(out)) % 8)
    return bytes(out)


def launch(name, target, tmp_path_factory, grid, block, params, repeat=0):
    """Run coppelius-<name> once (and time `repeat` more launches: the median in microseconds)."""
    from bobc.sass import assemble_kernel
    from bobc.sass.cubin import write_cubin
    raw = block_of(params)
    key = (name, target.name, len(raw))
    if key not in _CACHE:
        assembled = assemble_kernel(SOURCES / f"coppelius-{name}.sass", target)
        path = tmp_path_factory.mktemp("cubin") / f"coppelius-{name}.{target.name}.cubin"
        path.write_bytes(write_cubin(assembled, assembled.kernel_name, target, len(raw), block))
        module = cp.RawModule(path=str(path))
        _CACHE[key] = (module, module.get_function(assembled.kernel_name))
    fn = _CACHE[key][1]
    args = tuple(np.frombuffer(raw, dtype=np.uint64))
    grid = grid if isinstance(grid, tuple) else (grid,)
    fn(grid, (block,), args)
    cp.cuda.Device().synchronize()
    if repeat:
        times = []
        for _ in range(repeat):
            start, stop = cp.cuda.Event(), cp.cuda.Event()
            start.record()
            fn(grid, (block,), args)
            stop.record()
            stop.synchronize()
            times.append(cp.cuda.get_elapsed_time(start, stop) * 1000)
        print(f"\n  coppelius-{name} grid {grid} x {block}: {np.median(times):.1f} us")


def assert_half_close(h, v, rtol=0.0, atol=0.0):
    h64, v64 = np.asarray(h, np.float64), np.asarray(v, np.float64)
    allowed = 2.0 ** -11 * np.abs(v64) + 2.0 ** -25 + rtol * np.abs(v64) + atol
    err = np.abs(h64 - v64)
    worst = np.unravel_index(np.argmax(err - allowed), err.shape)
    assert np.all(err <= allowed), f"worst at {worst}: {h64[worst]} vs {v64[worst]} (allowed {allowed[worst]})"


def assert_close(x, v, rtol, atol):
    np.testing.assert_allclose(np.asarray(x, np.float64), np.asarray(v, np.float64), rtol=rtol, atol=atol)


def dev(a):
    return cp.asarray(np.ascontiguousarray(a))


@pytest.fixture(params=list(CONFIGS))
def config(request):
    return dict(CONFIGS[request.param], name=request.param)


# ---------------------------------------------------------------- tests

def test_embedding_forward_and_backward(config, target, tmp_path_factory):
    T, C = config["T"], config["C"]
    rng = np.random.default_rng(1)
    tokens = rng.integers(0, 256, T).astype(np.uint32)
    tokens[:8] = (0, 255, 255, 7, 7, 7, 0, 1)
    wte = rng.standard_normal((256, C)).astype(np.float32)
    wpe = rng.standard_normal((T, C)).astype(np.float32)
    d = {k: dev(v) for k, v in (("t", tokens), ("wte", wte), ("wpe", wpe))}
    x, xh = cp.full((T, C), np.nan, cp.float32), cp.zeros((T, C), cp.float16)
    launch("embedding-forward", target, tmp_path_factory, T // 8, 256,
           [d["t"], d["wte"], d["wpe"], x, xh, np.uint32(T), np.uint32(C)], repeat=20)
    want, want_h = ref.embedding_forward(tokens, wte, wpe)
    assert np.array_equal(x.get(), want) and np.array_equal(xh.get().view(np.uint16), want_h.view(np.uint16))
    dx = rng.standard_normal((T, C)).astype(np.float32)
    dwte, dwpe = cp.full((256, C), np.nan, cp.float32), cp.full((T, C), np.nan, cp.float32)
    launch("embedding-backward", target, tmp_path_factory, 256 + T, 256,
           [d["t"], dev(dx), dwte, dwpe, np.uint64(0), np.uint32(T), np.uint32(C), np.uint64(0)], repeat=20)
    gt, gp = ref.embedding_backward(tokens, dx)
    assert_close(dwte.get(), gt, 1e-6, 1e-5)
    assert np.array_equal(dwpe.get(), gp)


# the norms' last words: no split product's partials (S = 0: x, dy read plainly;
# tests/coppelius/test_layernorm_partials_s45.py runs the partials on the simulator)
NO_PARTIALS_FORWARD = (np.uint64(0), np.uint64(0), np.uint64(0), np.uint32(0), np.float32(0))
NO_PARTIALS_BACKWARD = (np.uint64(0), np.uint32(0), np.float32(0))


def test_layernorm_forward_and_backward(config, target, tmp_path_factory):
    T, C = config["T"], config["C"]
    rng = np.random.default_rng(2)
    x = (rng.standard_normal((T, C)) * 3 + 1).astype(np.float32)
    g = (rng.standard_normal(C) * 0.1).astype(np.float32)
    b = (rng.standard_normal(C) * 0.1).astype(np.float32)
    y, mean, rstd = cp.zeros((T, C), cp.float16), cp.zeros(T, cp.float32), cp.zeros(T, cp.float32)
    dx_, dg_, db_ = dev(x), dev(g), dev(b)
    launch("layernorm-forward", target, tmp_path_factory, T // 8, 256,
           [dx_, dg_, db_, y, mean, rstd, np.uint32(T), np.uint32(C), np.float32(1e-5), np.float32(1 / C),
            *NO_PARTIALS_FORWARD],
           repeat=20)
    _, m64, r64 = ref.layernorm_forward(x, g, b, 1e-5)
    assert_close(mean.get(), m64, 4e-5, 4e-6)
    assert_close(rstd.get(), r64, 4e-5, 0)
    xhat = (x - mean.get().astype(np.float64)[:, None]) * rstd.get().astype(np.float64)[:, None]
    assert_half_close(y.get(), xhat * (g.astype(np.float64) + 1) + b, rtol=8e-5, atol=8e-6)
    dy = rng.standard_normal((T, C)).astype(np.float32)
    dres = rng.standard_normal((T, C)).astype(np.float32)
    for add in (0, 1):
        out, outh = dev(dres), cp.zeros((T, C), cp.float16)        # dresidual in place, as the graph runs it
        launch("layernorm-backward", target, tmp_path_factory, T // 8, 256,
               [dx_, dg_, mean, rstd, dev(dy), out, out, outh, np.uint32(T), np.uint32(C), np.float32(1 / C),
                np.uint32(add), *NO_PARTIALS_BACKWARD], repeat=0)
        want, _ = ref.layernorm_backward(x, g, mean.get(), rstd.get(), dy, dres if add else None)
        assert_close(out.get(), want, 4e-4, 4e-4 * float(rstd.get().max()))
        assert np.array_equal(outh.get().view(np.uint16), out.get().astype(np.float16).view(np.uint16))
    launch("layernorm-backward", target, tmp_path_factory, T // 8, 256,
           [dx_, dg_, mean, rstd, dev(dy), out, out, outh, np.uint32(T), np.uint32(C), np.float32(1 / C),
            np.uint32(1), *NO_PARTIALS_BACKWARD], repeat=20)
    dgain, dbias = cp.full(C, np.nan, cp.float32), cp.full(C, np.nan, cp.float32)
    one_batch = [np.uint32(0)] * 6 + [np.uint32(1), np.uint32(0)]      # words 7..10: strides 0, B = 1
    launch("layernorm-param-backward", target, tmp_path_factory, C // 64, 256,
           [dx_, mean, rstd, dev(dy), dgain, dbias, np.uint32(T), np.uint32(C), *one_batch], repeat=20)
    wg, wb = ref.layernorm_param_backward(x, mean.get(), rstd.get(), dy)
    assert_close(dgain.get(), wg, 4e-5, 4e-4)
    assert_close(dbias.get(), wb, 4e-5, 4e-4)
    # three layer norms in one launch (the update's batched form): each batch bit for bit a
    # one-batch launch on its own data
    B = 3
    xs = np.stack([x * (z + 1) for z in range(B)]).astype(np.float32)
    dys = np.stack([np.roll(dy, z, axis=1) for z in range(B)]).astype(np.float32)
    means = np.stack([mean.get() * (z + 1) for z in range(B)]).astype(np.float32)
    rstds = np.stack([rstd.get() / (z + 1) for z in range(B)]).astype(np.float32)
    grads = cp.full((2, B, C), np.nan, cp.float32)
    launch("layernorm-param-backward", target, tmp_path_factory, (C // 64, B), 256,
           [dev(xs), dev(means), dev(rstds), dev(dys), grads[0], grads[1], np.uint32(T), np.uint32(C),
            np.uint32(T * C), np.uint32(T * C), np.uint32(T), np.uint32(T), np.uint32(C), np.uint32(C),
            np.uint32(B), np.uint32(0)], repeat=20)
    for z in range(B):
        one = cp.full((2, C), np.nan, cp.float32)
        launch("layernorm-param-backward", target, tmp_path_factory, C // 64, 256,
               [dev(xs[z]), dev(means[z]), dev(rstds[z]), dev(dys[z]), one[0], one[1], np.uint32(T), np.uint32(C),
                *one_batch])
        assert np.array_equal(grads[:, z].get().view(np.uint32), one.get().view(np.uint32)), z


def test_bias_backward(config, target, tmp_path_factory):
    T, C = config["T"], config["C"]
    rng = np.random.default_rng(3)
    for N in (C, 3 * C, 4 * C):
        dy = (rng.standard_normal((T, N)) * 4).astype(np.float16)
        db = cp.full(N, np.nan, cp.float32)
        launch("bias-backward", target, tmp_path_factory, N // 64, 256, [dev(dy), db, np.uint32(T), np.uint32(N)],
               repeat=20 if N == 4 * C else 0)
        assert_close(db.get(), ref.bias_backward(dy), 4e-5, 4e-4)


def test_softmax_forward_and_backward(config, target, tmp_path_factory):
    T, H = config["T"], config["H"]
    rows = H * T
    rng = np.random.default_rng(4)
    S = (rng.standard_normal((rows, T)) * 4).astype(np.float32)
    S[0] = 80.0
    Ph, P = cp.zeros((rows, T), cp.float16), cp.full((rows, T), np.nan, cp.float32)
    launch("softmax-forward", target, tmp_path_factory, rows // 8, 256,
           [dev(S), Ph, P, np.uint32(rows), np.uint32(T), np.float32(0.125), np.uint32(0)], repeat=20)
    _, want = ref.softmax_forward(S, T, 0.125)
    masked = ~(np.arange(T)[None, :] <= (np.arange(rows) % T)[:, None])
    assert np.all(P.get()[masked] == 0) and np.all(Ph.get()[masked] == 0)
    assert_close(P.get(), want, 1.2e-4, 1e-9)
    assert_half_close(Ph.get(), want, rtol=1.2e-4, atol=1e-9)
    dP = rng.standard_normal((rows, T)).astype(np.float32)
    dS = cp.zeros((rows, T), cp.float16)
    launch("softmax-backward", target, tmp_path_factory, rows // 8, 256,
           [P, dev(dP), dS, np.uint32(rows), np.uint32(T), np.float32(0.125), np.uint32(0)], repeat=20)
    P64 = P.get().astype(np.float64)
    assert_half_close(dS.get(), 0.125 * P64 * (dP - (P64 * dP).sum(axis=1, keepdims=True)), rtol=4e-5, atol=4e-7)


def test_gelu_forward_and_backward(config, target, tmp_path_factory):
    T, C = config["T"], config["C"]
    N = T * 4 * C
    rng = np.random.default_rng(5)
    u = (rng.standard_normal(N) * 3).astype(np.float32)
    u[:8] = (-100, -30, -1e-3, 0, 1e-3, 30, 100, 3e4)
    dy = rng.standard_normal(N).astype(np.float32)
    g, du = cp.zeros(N, cp.float16), cp.zeros(N, cp.float16)
    launch("gelu-forward", target, tmp_path_factory, N // 1024, 256, [dev(u), g, np.uint32(N), np.uint32(0)],
           repeat=20)
    assert_half_close(g.get(), ref.gelu(u), rtol=8e-6, atol=4e-7)
    launch("gelu-backward", target, tmp_path_factory, N // 1024, 256,
           [dev(u), dev(dy), du, np.uint32(N), np.uint32(0)], repeat=20)
    assert_half_close(du.get(), dy * ref.gelu_derivative(u), rtol=1.6e-5, atol=4e-6 * np.abs(dy))


def test_copy(target, tmp_path_factory):
    N = 16 * 1024 * 1024 // 4                          # a 16 MiB checkpoint chunk
    src = np.random.default_rng(10).integers(0, 2 ** 32, N, dtype=np.uint64).astype(np.uint32)
    dst = cp.zeros(N, cp.uint32)
    launch("copy", target, tmp_path_factory, N // 1024, 256, [dev(src), dst, np.uint32(N), np.uint32(0)], repeat=20)
    assert np.array_equal(dst.get(), src)


def test_residual_add_and_half_copy(config, target, tmp_path_factory):
    N = config["T"] * config["C"]
    rng = np.random.default_rng(6)
    a, b = rng.standard_normal(N).astype(np.float32), rng.standard_normal(N).astype(np.float32)
    da = dev(a)
    launch("residual-add", target, tmp_path_factory, N // 1024, 256, [da, dev(b), da, np.uint32(N), np.uint32(0)],
           repeat=0)
    assert np.array_equal(da.get(), ref.residual_add(a, b))
    w = (a * 1e4).astype(np.float32)
    h = cp.zeros(N, cp.float16)
    launch("half-copy", target, tmp_path_factory, N // 1024, 256, [dev(w), h, np.uint32(N), np.uint32(0)], repeat=20)
    assert np.array_equal(h.get().view(np.uint16), ref.half_copy(w).view(np.uint16))


def test_cross_entropy_and_loss_copy(config, target, tmp_path_factory):
    T = config["T"]
    rng = np.random.default_rng(7)
    z = (rng.standard_normal((T, 256)) * 3).astype(np.float32)
    z[1] = -8e37
    z[2, 7] = 90
    t = rng.integers(0, 256, T).astype(np.uint32)
    t[2] = 7
    S = np.float32(1024.0 / T)
    d, losses = cp.zeros((T, 256), cp.float16), cp.full(T, np.nan, cp.float32)
    launch("cross-entropy", target, tmp_path_factory, T // 8, 256, [dev(z), dev(t), d, losses, np.uint32(T), S],
           repeat=20)
    want_d, want_l = ref.cross_entropy(z, t, S)
    z64 = z.astype(np.float64)
    p = np.exp(z64 - z64.max(axis=1, keepdims=True))
    p /= p.sum(axis=1, keepdims=True)
    p[np.arange(T), t] -= 1
    assert_close(losses.get(), want_l, 1e-5, 2e-5)
    assert_half_close(d.get(), p * float(S), rtol=8e-5, atol=4e-6)
    for flag in (0, 1):
        for update in (0, 1):
            counters = dev(np.array([flag, 0, 3, 1], np.uint32))     # flag, pad, updates, skipped
            result = cp.zeros(4, cp.uint32)
            flag_word = counters.data.ptr
            launch("loss-copy", target, tmp_path_factory, 1, 32,
                   [losses, result, counters, np.uint64(flag_word + 8), np.uint32(T), np.float32(1 / T),
                    np.uint32(update), np.uint32(0)])
            want, after, cleared = ref.loss_copy(losses.get(), np.float32(1 / T), flag, np.array([3, 1], np.uint32),
                                                 update)
            got = result.get()
            assert list(got[1:]) == list(want[1:]) and list(counters.get()) == [cleared, 0, *after]
            assert_close(got[:1].view(np.float32), losses.get().astype(np.float64).mean(keepdims=True), 1e-5, 0)


@pytest.mark.parametrize("poison", [None, np.inf, np.nan])
def test_nonfinite_check(poison, target, tmp_path_factory):
    N = 3_323_392
    g = np.random.default_rng(8).standard_normal(N).astype(np.float32) * 1e30
    if poison is not None:
        g[N - 5] = poison
    counters = dev(np.array([0, 4], np.uint32))
    launch("nonfinite-check", target, tmp_path_factory, (N + 1023) // 1024, 256,
           [dev(g), counters, np.uint32(N), np.uint32(0)], repeat=20 if poison is None else 0)
    assert list(counters.get()) == [0 if poison is None else 1, 4]


@pytest.mark.parametrize("flag", [0, 1])
def test_adamw_half(flag, target, tmp_path_factory):
    N = 3_323_392
    rng = np.random.default_rng(9)
    W = (rng.standard_normal(N) * 0.02).astype(np.float32)
    G = (rng.standard_normal(N) * 1024 * 1e-2).astype(np.float32)
    M = (rng.standard_normal(N) * 10).astype(np.float32)
    V = (rng.random(N) * 100).astype(np.float32)
    scal = [np.float32(x) for x in (1e-3 * np.sqrt(1 - 0.95 ** 3) / (1 - 0.9 ** 3), 1e-8 * 1024, 1 - 1e-4, 0.9, 0.1,
                                    0.95, 0.05)]
    d = [dev(x) for x in (W, G, M, V)]
    H = cp.full(N, 2.0, cp.float16)
    counters = dev(np.array([flag, 0], np.uint32))
    launch("adamw-half", target, tmp_path_factory, (N + 1023) // 1024, 256,
           d + [H, counters] + scal + [np.uint32(N), np.uint32(3), np.float32(1.0)], repeat=0)   # t at 80, multiplier 84
    if flag:
        for got, was in zip(d, (W, G, M, V)):
            assert np.array_equal(got.get(), was)
        assert np.all(H.get() == 2.0)
        return
    a, eps, decay, b1, omb1, b2, omb2 = (float(x) for x in scal)
    m = b1 * M + omb1 * G.astype(np.float64)
    v = b2 * V + omb2 * G.astype(np.float64) ** 2
    w = W * decay - a * m / (np.sqrt(v) + eps)
    assert_close(d[2].get(), m, 4e-6, 1e-6)
    assert_close(d[3].get(), v, 4e-6, 0)
    # the bar: master weights within 1e-3 of the update's size (plus W's own rounding)
    update = np.abs(w - W.astype(np.float64) * decay)
    assert np.all(np.abs(d[0].get() - w) <= 1e-3 * update + 2 * np.spacing(np.abs(W)))
    assert_half_close(H.get(), w, rtol=4e-6, atol=1e-7)
    # timing of the large configuration's AdamW (85.6 M parameters, two thirds of a GB moved)
    n = 85_645_824
    big = [cp.zeros(n, cp.float32) for _ in range(4)] + [cp.zeros(n, cp.float16), dev(np.array([0, 0], np.uint32))]
    launch("adamw-half", target, tmp_path_factory, n // 1024, 256,
           big + scal + [np.uint32(n), np.float32(1.0), np.uint32(0)], repeat=10)
