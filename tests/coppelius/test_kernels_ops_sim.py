"""Coppelius's non-GEMM kernels run on the functional simulator (bobc.sim.kernel.run_kernel),
both targets, against NumPy float64 (examples/coppelius/coppelius_model/ref_ops.py).

Tolerances.  A binary16 output h of a value the kernel computes in binary32 is compared with
the float64 value v as |h - v| <= 2^-11 |v| + 2^-25 (binary16's rounding: half an ulp, relative
2^-11 for normal numbers, 2^-25 absolute below them; an exact v rounds to within that, and so
does the kernel's binary32 value up to the binary32 error added on top) plus the binary32
computation's own error bound, stated per kernel.  The simulator's MUFU results are correctly
rounded (docs/simulator.md); the hardware's are within 1-2 ulp, which the GPU test allows for.
"""
from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np
import pytest

try:
    from bobc.sim.kernel import Pointer, run_kernel
except ImportError as missing:      # the one-kernel API comes with SIM's branch (s3-sim): every test
    _MISSING = missing              # here then fails by name instead of the whole run stopping at collection
    run_kernel = None

    class Pointer:
        def __init__(self, buffer, offset=0):
            self.buffer, self.offset = buffer, offset

REPO = Path(__file__).resolve().parents[2]
SOURCES = REPO / "examples" / "coppelius" / "Realization" / "Nvidia" / "SM86"
ARCHS = ("sm_86", "sm_90")


def _load_ref():
    spec = importlib.util.spec_from_file_location("coppelius_ref_ops",
                                                  REPO / "examples/coppelius/coppelius_model/ref_ops.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


ref = _load_ref()


def source(name):
    return (SOURCES / f"coppelius-{name}.sass").read_text(encoding="utf-8")


def run(name, arch, grid, block, params, buffers):
    if run_kernel is None:
        pytest.fail(f"the simulator's one-kernel API is missing ({_MISSING}): it comes with bobc.sim.kernel "
                    f"(SIM's branch, s3-sim)")
    return run_kernel(source(name), arch, grid=grid, block=block, params=params, buffers=buffers)


def assert_half_close(h, v, rtol=0.0, atol=0.0):
    """h (binary16) against float64 v: binary16 rounding plus the binary32 computation's bound."""
    h64 = np.asarray(h, dtype=np.float64)
    v64 = np.asarray(v, dtype=np.float64)
    allowed = 2.0 ** -11 * np.abs(v64) + 2.0 ** -25 + rtol * np.abs(v64) + atol
    err = np.abs(h64 - v64)
    worst = np.unravel_index(np.argmax(err - allowed), err.shape)
    assert np.all(err <= allowed), f"worst at {worst}: {h64[worst]} vs {v64[worst]} (allowed {allowed[worst]})"


def assert_close(x, v, rtol, atol):
    x64 = np.asarray(x, dtype=np.float64)
    v64 = np.asarray(v, dtype=np.float64)
    err = np.abs(x64 - v64)
    allowed = rtol * np.abs(v64) + atol
    worst = np.unravel_index(np.argmax(err - allowed), err.shape)
    assert np.all(err <= allowed), f"worst at {worst}: {x64[worst]} vs {v64[worst]}"


@pytest.fixture
def rng():
    return np.random.default_rng(20261201)


# ---------------------------------------------------------------- embedding

@pytest.mark.parametrize("arch", ARCHS)
def test_embedding_forward_is_exact(arch, rng):
    """A binary32 sum of two binary32 values, then binary16 of it: bit-exact against NumPy."""
    T, C = 16, 384
    tokens = rng.integers(0, 256, T).astype(np.uint32)
    tokens[:3] = (0, 255, 255)
    wte = rng.standard_normal((256, C)).astype(np.float32)
    wpe = rng.standard_normal((T + 8, C)).astype(np.float32)
    out = run("embedding-forward", arch, (T // 8,), (256,),
              [Pointer("tok"), Pointer("wte"), Pointer("wpe"), Pointer("x"), Pointer("xh"), np.uint32(T), np.uint32(C)],
              {"tok": tokens, "wte": wte, "wpe": wpe, "x": np.zeros((T, C), np.float32),
               "xh": np.zeros((T, C), np.float16)})
    x, xh = ref.embedding_forward(tokens, wte, wpe)
    assert np.array_equal(out["x"], x)
    assert np.array_equal(out["xh"].view(np.uint16), xh.view(np.uint16))


@pytest.mark.parametrize("arch", ARCHS)
@pytest.mark.parametrize("T,C", [(40, 256), (64, 160)])
def test_embedding_backward_sums_each_tokens_positions(arch, T, C, rng):
    """Every token row written (zero where the context lacks the token); binary32 sums of at
    most T terms of size ~1: |error| <= T * 2^-24 * sum|terms| (<= 1e-5 here).  Few distinct
    tokens: a token at a dozen positions, in both 32-position groups; T not a multiple of 32;
    C not a multiple of 128 (a warp partly past C)."""
    tokens = rng.integers(0, 4, T).astype(np.uint32)      # repeats: many positions per token
    tokens[0] = 255
    tokens[T - 1] = 256 + 3                                # masked to a byte: row 3
    dx = rng.standard_normal((T, C)).astype(np.float32)
    out = run("embedding-backward", arch, (256 + T,), (256,),
              [Pointer("tok"), Pointer("dx"), Pointer("dwte"), Pointer("dwpe"), np.uint64(0), np.uint32(T),
               np.uint32(C), np.uint64(0)],
              {"tok": tokens, "dx": dx, "dwte": np.full((256, C), np.nan, np.float32),
               "dwpe": np.full((T, C), np.nan, np.float32)})
    dwte, dwpe = ref.embedding_backward(tokens, dx)
    assert_close(out["dwte"], dwte, 1e-6, 1e-5)
    assert np.array_equal(out["dwpe"], dwpe)
    assert np.all(out["dwte"][100:255] == 0.0)


# ---------------------------------------------------------------- layer norm

@pytest.mark.parametrize("arch", ARCHS)
@pytest.mark.parametrize("C", [256, 768])
def test_layernorm_forward(arch, C, rng):
    """mean/rstd: binary32 sums of C terms (relative error <= C 2^-24 ~ 5e-5 worst case, two-pass
    variance); y = binary16 of a value within ~1e-5 relative of exact."""
    R = 16
    x = (rng.standard_normal((R, C)) * 3 + 1.5).astype(np.float32)
    gain = (rng.standard_normal(C) * 0.1).astype(np.float32)
    bias = (rng.standard_normal(C) * 0.1).astype(np.float32)
    eps = np.float32(1e-5)
    out = run("layernorm-forward", arch, (R // 8,), (256,),
              [Pointer("x"), Pointer("g"), Pointer("b"), Pointer("y"), Pointer("mean"), Pointer("rstd"),
               np.uint32(R), np.uint32(C), eps, np.float32(1.0 / C),
               # words 8..11: no product's partials (S = 0; tests/coppelius/test_layernorm_partials_s45.py)
               np.uint64(0), np.uint64(0), np.uint64(0), np.uint32(0), np.float32(0)],
              {"x": x, "g": gain, "b": bias, "y": np.zeros((R, C), np.float16),
               "mean": np.zeros(R, np.float32), "rstd": np.zeros(R, np.float32)})
    y, mean, rstd = ref.layernorm_forward(x, gain, bias, eps)
    xhat = (x - mean.astype(np.float64)[:, None]) * rstd.astype(np.float64)[:, None]
    exact = xhat * (gain.astype(np.float64) + 1.0) + bias
    assert_close(out["mean"], mean, 1e-5, 1e-6)
    assert_close(out["rstd"], rstd, 1e-5, 0)
    assert_half_close(out["y"], exact, rtol=2e-5, atol=2e-6)


@pytest.mark.parametrize("arch", ARCHS)
@pytest.mark.parametrize("add", [0, 1])
@pytest.mark.parametrize("C", [256, 768])
def test_layernorm_backward(arch, add, C, rng):
    """dx: two row sums of C terms then a binary32 combination (relative ~1e-5 of the terms'
    size); its binary16 copy the rounding of the binary32 value.  Without `add`, dresidual is
    never read (it holds NaN here)."""
    R = 16
    x = (rng.standard_normal((R, C)) * 2).astype(np.float32)
    gain = (rng.standard_normal(C) * 0.1).astype(np.float32)
    dy = rng.standard_normal((R, C)).astype(np.float32)
    dres = rng.standard_normal((R, C)).astype(np.float32) if add else np.full((R, C), np.nan, np.float32)
    _, mean, rstd = ref.layernorm_forward(x, gain, np.zeros(C, np.float32), 1e-5)
    out = run("layernorm-backward", arch, (R // 8,), (256,),
              [Pointer("x"), Pointer("g"), Pointer("mean"), Pointer("rstd"), Pointer("dy"), Pointer("dres"),
               Pointer("dx"), Pointer("dxh"), np.uint32(R), np.uint32(C), np.float32(1.0 / C), np.uint32(add),
               np.uint64(0), np.uint32(0), np.float32(0)],   # words 10, 11: no product's partials (S = 0)
              {"x": x, "g": gain, "mean": mean, "rstd": rstd, "dy": dy, "dres": dres,
               "dx": np.full((R, C), np.nan, np.float32), "dxh": np.zeros((R, C), np.float16)})
    dx, _ = ref.layernorm_backward(x, gain, mean, rstd, dy, dres if add else None)
    scale = float(np.abs(rstd).max())
    assert_close(out["dx"], dx, 1e-4, 1e-4 * scale)
    assert np.array_equal(out["dxh"].view(np.uint16), out["dx"].astype(np.float16).view(np.uint16))


@pytest.mark.parametrize("arch", ARCHS)
def test_layernorm_param_backward(arch, rng):
    """Column sums over R rows (R % 32 == 0): |error| <= R 2^-24 sum|terms|."""
    R, C = 64, 192
    x = (rng.standard_normal((R, C)) * 2).astype(np.float32)
    dy = rng.standard_normal((R, C)).astype(np.float32)
    _, mean, rstd = ref.layernorm_forward(x, np.zeros(C, np.float32), np.zeros(C, np.float32), 1e-5)
    out = run("layernorm-param-backward", arch, ((C + 63) // 64,), (256,),
              [Pointer("x"), Pointer("mean"), Pointer("rstd"), Pointer("dy"), Pointer("dg"), Pointer("db"),
               np.uint32(R), np.uint32(C), *_LN_ONE_BATCH],
              {"x": x, "mean": mean, "rstd": rstd, "dy": dy, "dg": np.full(C, np.nan, np.float32),
               "db": np.full(C, np.nan, np.float32)})
    dg, db = ref.layernorm_param_backward(x, mean, rstd, dy)
    assert_close(out["dg"], dg, 1e-5, 1e-4)
    assert_close(out["db"], db, 1e-5, 1e-4)


# words 7..10 of a one-batch launch: strides 0, B = 1
_LN_ONE_BATCH = (np.uint32(0),) * 6 + (np.uint32(1), np.uint32(0))


@pytest.mark.parametrize("arch", ARCHS)
def test_layernorm_param_backward_batches(arch, rng):
    """Three layer norms in one launch (grid y = 4 with B = 3: the fourth row of blocks stores
    nothing), each of x, mean, rstd, dy, dgain, dbias at its own batch stride (padding between
    batches, NaN, never read): each batch's gain and bias gradients are bit for bit a one-batch
    launch's on that batch's data, and within the column sums' bound of float64."""
    R, C, B = 64, 128, 3
    strides = {"x": R * C + 64, "mean": R + 32, "rstd": R + 96, "dy": R * C + 192, "dg": C + 16, "db": C + 48}
    extents = {"x": R * C, "mean": R, "rstd": R, "dy": R * C, "dg": C, "db": C}
    batched = {name: np.full((B + 1) * stride, np.nan, np.float32) for name, stride in strides.items()}
    inputs = []
    for z in range(B):
        x = (rng.standard_normal((R, C)) * (z + 1) + z).astype(np.float32)
        dy = rng.standard_normal((R, C)).astype(np.float32)
        _, mean, rstd = ref.layernorm_forward(x, np.zeros(C, np.float32), np.zeros(C, np.float32), 1e-5)
        inputs.append({"x": x.ravel(), "mean": mean, "rstd": rstd, "dy": dy.ravel()})
        for name, value in inputs[-1].items():
            batched[name][z * strides[name]:z * strides[name] + extents[name]] = value
    words = [np.uint32(strides[n]) for n in ("x", "dy", "mean", "rstd", "dg", "db")]
    out = run("layernorm-param-backward", arch, ((C + 63) // 64, B + 1), (256,),
              [Pointer(n) for n in ("x", "mean", "rstd", "dy", "dg", "db")] + [np.uint32(R), np.uint32(C)]
              + words + [np.uint32(B), np.uint32(0)], batched)
    for z in range(B):
        one = run("layernorm-param-backward", arch, ((C + 63) // 64,), (256,),
                  [Pointer(n) for n in ("x", "mean", "rstd", "dy", "dg", "db")] + [np.uint32(R), np.uint32(C),
                                                                                  *_LN_ONE_BATCH],
                  {**inputs[z], "dg": np.full(C, np.nan, np.float32), "db": np.full(C, np.nan, np.float32)})
        for name in ("dg", "db"):
            got = out[name][z * strides[name]:z * strides[name] + C]
            assert np.array_equal(got.view(np.uint32), one[name].view(np.uint32)), (z, name)
        x, dy = inputs[z]["x"].reshape(R, C).astype(np.float64), inputs[z]["dy"].reshape(R, C).astype(np.float64)
        xhat = (x - inputs[z]["mean"].astype(np.float64)[:, None]) * inputs[z]["rstd"].astype(np.float64)[:, None]
        for name, terms in (("dg", dy * xhat), ("db", dy)):
            got = out[name][z * strides[name]:z * strides[name] + C].astype(np.float64)
            # R additions in binary32 and xhat's own two roundings: (R + 2) 2^-24 sum |terms|
            bound = (R + 2) * 2.0 ** -24 * np.abs(terms).sum(axis=0)
            assert np.all(np.abs(got - terms.sum(axis=0)) <= bound), (z, name)
    for name in ("dg", "db"):      # the padding, and the batch past B, untouched
        written = np.zeros(batched[name].size, bool)
        for z in range(B):
            written[z * strides[name]:z * strides[name] + C] = True
        assert np.isnan(out[name][~written]).all(), name


@pytest.mark.parametrize("arch", ARCHS)
def test_bias_backward(arch, rng):
    """Column sums of binary16 values (exact in binary32) over R rows (R % 64 == 0)."""
    R, N = 128, 192
    dy = (rng.standard_normal((R, N)) * 4).astype(np.float16)
    out = run("bias-backward", arch, (N // 64,), (256,), [Pointer("dy"), Pointer("db"), np.uint32(R), np.uint32(N)],
              {"dy": dy, "db": np.full(N, np.nan, np.float32)})
    assert_close(out["db"], ref.bias_backward(dy), 1e-5, 1e-4)
    assert_close(out["db"], dy.astype(np.float64).sum(axis=0), 1e-5, 1e-4)


# ---------------------------------------------------------------- attention softmax

@pytest.mark.parametrize("arch", ARCHS)
@pytest.mark.parametrize("T", [128, 256])
def test_softmax_forward(arch, T, rng):
    """P in binary32: exp and the sum of <= T terms in binary32 (relative ~T 2^-24 <= 2e-5);
    masked keys exactly 0; binary16 P the rounding of that."""
    rows = 2 * T if T == 128 else T            # two heads / one head
    S = (rng.standard_normal((rows, T)) * 4).astype(np.float32)
    S[0, :] = 80.0                        # equal large scores
    S[T - 1, :5] = -1e30                  # a row whose first keys vanish
    scale = np.float32(0.125)
    out = run("softmax-forward", arch, (rows // 8,), (256,),
              [Pointer("S"), Pointer("Ph"), Pointer("P"), np.uint32(rows), np.uint32(T), scale, np.uint32(0)],
              {"S": S, "Ph": np.zeros((rows, T), np.float16), "P": np.full((rows, T), np.nan, np.float32)})
    _, P = ref.softmax_forward(S, T, scale)
    exact = P.astype(np.float64)
    got = out["P"]
    masked = ~(np.arange(T)[None, :] <= (np.arange(rows) % T)[:, None])
    assert np.all(got[masked] == 0.0) and np.all(out["Ph"][masked] == 0.0)
    assert_close(got, exact, 3e-5, 1e-9)
    assert_half_close(out["Ph"], exact, rtol=3e-5, atol=1e-9)


@pytest.mark.parametrize("arch", ARCHS)
def test_softmax_backward(arch, rng):
    """dS = scale P (dP - sum P dP): one row sum of T products then binary32 arithmetic."""
    T = 128
    rows = 16
    S = (rng.standard_normal((T, T)) * 3).astype(np.float32)
    _, P = ref.softmax_forward(S, T, 1.0)
    P = P[T - rows:]
    dP = rng.standard_normal((rows, T)).astype(np.float32)
    scale = np.float32(0.125)
    out = run("softmax-backward", arch, (rows // 8,), (256,),
              [Pointer("P"), Pointer("dP"), Pointer("dS"), np.uint32(rows), np.uint32(T), scale, np.uint32(0)],
              {"P": P, "dP": dP, "dS": np.zeros((rows, T), np.float16)})
    P64 = P.astype(np.float64)
    exact = 0.125 * P64 * (dP - (P64 * dP).sum(axis=1, keepdims=True))
    assert_half_close(out["dS"], exact, rtol=1e-5, atol=1e-7)


# ---------------------------------------------------------------- GELU, residual, half copy

@pytest.mark.parametrize("arch", ARCHS)
def test_gelu_forward_and_backward(arch, rng):
    """u over [-12, 12] plus the tails: r = 1/(1 + 2^x) in binary32 has relative error ~4 ulp,
    gelu = u (1 - r) likewise; binary16 output."""
    N = 2048
    u = np.concatenate([np.linspace(-12, 12, N - 8), [-100, -30, -1e-3, 0, 1e-3, 30, 100, 3e4]]).astype(np.float32)
    dy = rng.standard_normal(N).astype(np.float32)
    fwd = run("gelu-forward", arch, (N // 1024,), (256,), [Pointer("u"), Pointer("g"), np.uint32(N), np.uint32(0)],
              {"u": u, "g": np.zeros(N, np.float16)})
    assert_half_close(fwd["g"], ref.gelu(u), rtol=2e-6, atol=1e-7)
    bwd = run("gelu-backward", arch, (N // 1024,), (256,),
              [Pointer("u"), Pointer("dy"), Pointer("du"), np.uint32(N), np.uint32(0)],
              {"u": u, "dy": dy, "du": np.zeros(N, np.float16)})
    assert_half_close(bwd["du"], dy * ref.gelu_derivative(u), rtol=4e-6, atol=1e-6 * np.abs(dy))


@pytest.mark.parametrize("arch", ARCHS)
def test_residual_add_and_half_copy(arch, rng):
    N = 2048 + 4
    a = rng.standard_normal(N).astype(np.float32)
    b = rng.standard_normal(N).astype(np.float32)
    out = run("residual-add", arch, (3,), (256,), [Pointer("a"), Pointer("b"), Pointer("a"), np.uint32(N), np.uint32(0)],
              {"a": a, "b": b})
    assert np.array_equal(out["a"], ref.residual_add(a, b))
    w = np.concatenate([a * 100, [7e4, -7e4, 65504, 1e-8]]).astype(np.float32)[:N]
    half = run("half-copy", arch, (3,), (256,), [Pointer("w"), Pointer("h"), np.uint32(N), np.uint32(0)],
               {"w": w, "h": np.zeros(N, np.float16)})
    assert np.array_equal(half["h"].view(np.uint16), ref.half_copy(w).view(np.uint16))


# ---------------------------------------------------------------- loss

@pytest.mark.parametrize("arch", ARCHS)
def test_cross_entropy(arch, rng):
    """Row losses: log-sum-exp of 256 terms in binary32 (|error| <= ~1e-5 absolute for losses
    ~5); the gradient (softmax - onehot) * S/T rounded to binary16."""
    T = 16
    logits = (rng.standard_normal((T, 256)) * 3).astype(np.float32)
    logits[1] = -8e37
    logits[2, 7] = 90.0
    targets = rng.integers(0, 256, T).astype(np.uint32)
    targets[2] = 7
    gscale = np.float32(1024.0 / T)
    out = run("cross-entropy", arch, (T // 8,), (256,),
              [Pointer("z"), Pointer("t"), Pointer("d"), Pointer("loss"), np.uint32(T), gscale],
              {"z": logits, "t": targets, "d": np.zeros((T, 256), np.float16), "loss": np.zeros(T, np.float32)})
    d, losses = ref.cross_entropy(logits, targets, gscale)
    z = logits.astype(np.float64)
    p = np.exp(z - z.max(axis=1, keepdims=True))
    p /= p.sum(axis=1, keepdims=True)
    p[np.arange(T), targets] -= 1
    assert_close(out["loss"], losses, 2e-6, 2e-6)
    assert_half_close(out["d"], p * float(gscale), rtol=2e-5, atol=1e-6)


@pytest.mark.parametrize("arch", ARCHS)
@pytest.mark.parametrize("flag", [0, 1])
@pytest.mark.parametrize("update", [0, 1])
def test_loss_copy(arch, flag, update, rng):
    """The mean of T losses (binary32 sum of T terms ~5: relative error <= T 2^-24), the
    counters moved only by an update, the flag cleared."""
    T = 128
    losses = (rng.random(T) * 6).astype(np.float32)
    out = run("loss-copy", arch, (1,), (32,),
              [Pointer("l"), Pointer("res"), Pointer("c", offset=0), Pointer("c", offset=8), np.uint32(T),
               np.float32(1.0 / T), np.uint32(update), np.uint32(0)],
              {"l": losses, "res": np.zeros(4, np.uint32), "c": np.array([flag, 0, 10, 2], np.uint32)})
    result, counters, cleared = ref.loss_copy(losses, np.float32(1 / T), flag, np.array([10, 2], np.uint32), update)
    assert list(out["res"][1:]) == list(result[1:]) == [flag * update, 10 + update, 2 + flag * update]
    assert_close(out["res"][:1].view(np.float32), losses.astype(np.float64).mean(keepdims=True), 1e-5, 0)
    assert list(out["c"]) == [cleared, 0, *counters]


# ---------------------------------------------------------------- overflow and AdamW

@pytest.mark.parametrize("arch", ARCHS)
@pytest.mark.parametrize("poison", [None, np.inf, -np.inf, np.nan])
def test_nonfinite_check(arch, poison, rng):
    N = 4096 + 8
    g = rng.standard_normal(N).astype(np.float32) * 1e30
    if poison is not None:
        g[N - 3] = poison
    out = run("nonfinite-check", arch, ((N + 1023) // 1024,), (256,),
              [Pointer("g"), Pointer("c"), np.uint32(N), np.uint32(0)],
              {"g": g, "c": np.array([0, 9], np.uint32)})
    assert list(out["c"]) == [0 if poison is None else 1, 9]


MULTIPLIER = 0.5
ADAM = dict(alpha=1e-3, epsilon=1e-8 * 1024, decay=1 - 1e-3 * 0.1, beta1=0.9, one_minus_beta1=0.1, beta2=0.95,
            one_minus_beta2=0.05)


def _adam_params(N):
    return ([Pointer("W"), Pointer("G"), Pointer("M"), Pointer("V"), Pointer("H"), Pointer("c")]
            + [np.float32(ADAM[k]) for k in ("alpha", "epsilon", "decay", "beta1", "one_minus_beta1", "beta2",
                                             "one_minus_beta2")]
            + [np.uint32(N), np.uint32(0), np.float32(MULTIPLIER)])      # byte 80: t (unread), 84: the multiplier


@pytest.mark.parametrize("arch", ARCHS)
@pytest.mark.parametrize("flag", [0, 1])
def test_adamw_half(arch, flag, rng):
    """One step in binary32 (MUFU.SQRT/RCP correctly rounded here): W within 2 ulp-ish of the
    float64 update; with the flag set nothing is written."""
    N = 2048 + 4
    W = rng.standard_normal(N).astype(np.float32)
    G = (rng.standard_normal(N) * 1024).astype(np.float32)
    M = (rng.standard_normal(N) * 100).astype(np.float32)
    V = (rng.random(N) * 1e4).astype(np.float32)
    H = np.full(N, 3.0, np.float16)
    out = run("adamw-half", arch, ((N + 1023) // 1024,), (256,), _adam_params(N),
              {"W": W, "G": G, "M": M, "V": V, "H": H, "c": np.array([flag, 0], np.uint32)})
    if flag:
        for k, v in (("W", W), ("M", M), ("V", V), ("H", H)):
            assert np.array_equal(out[k], v)
        return
    a = {k: float(np.float32(v)) for k, v in ADAM.items()}
    g = G.astype(np.float64) * MULTIPLIER
    m = a["beta1"] * M + a["one_minus_beta1"] * g
    v = a["beta2"] * V + a["one_minus_beta2"] * g * g
    w = W * a["decay"] - a["alpha"] * m / (np.sqrt(v) + a["epsilon"])
    assert_close(out["M"], m, 1e-6, 1e-6)
    assert_close(out["V"], v, 1e-6, 0)
    assert_close(out["W"], w, 1e-6, 1e-6)
    assert_half_close(out["H"], w, rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("arch", ARCHS)
def test_copy(arch, rng):
    N = 2048 + 12
    src = rng.integers(0, 2 ** 32, N, dtype=np.uint64).astype(np.uint32)
    out = run("copy", arch, (3,), (256,), [Pointer("s"), Pointer("d"), np.uint32(N), np.uint32(0)],
              {"s": src, "d": np.zeros(N + 4, np.uint32)})
    assert np.array_equal(out["d"][:N], src) and np.all(out["d"][N:] == 0)
