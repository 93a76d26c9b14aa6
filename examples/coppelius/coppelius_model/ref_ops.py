"""Coppelius's non-GEMM kernels in NumPy: the exact semantics each SASS kernel of
examples/coppelius/Realization/Nvidia/SM86/coppelius-<name>.sass implements, once as array
functions (float64 inside, rounded where the kernel's output is rounded: binary32 or
binary16) and once registered the way examples/bob/reference_kernels.py registers Bob's
kernels (`KERNELS[identity](memory, launch)`: argument i is 64-bit parameter word i, the
scalars are 32-bit halves of a word, low half first).

The parameter blocks and launch geometries are in each kernel's header (the launches that
use them: coppelius_model/graph.py); this module is their executable statement.  The
kernels compute in binary32 (reductions in their own order); the tests compare them with
these functions within tolerances argued in tests/coppelius/test_kernels_ops_sim.py and
tests/gpu/test_coppelius_kernels.py.
"""
from __future__ import annotations

import importlib.util
import math
import struct
from pathlib import Path

import numpy as np

try:
    from . import ref_gemm
except ImportError:     # loaded as a lone file (tests/coppelius/test_kernels_ops.py): its neighbour by path
    _spec = importlib.util.spec_from_file_location("coppelius_ref_gemm", Path(__file__).with_name("ref_gemm.py"))
    ref_gemm = importlib.util.module_from_spec(_spec)
    _spec.loader.exec_module(ref_gemm)

VOCABULARY = 256
GELU_K = math.sqrt(2.0 / math.pi)     # tanh-form GELU: 0.5 u (1 + tanh(K (u + A u^3)))
GELU_A = 0.044715


def half(values) -> np.ndarray:
    """binary32 values rounded to binary16 (nearest even, overflow to infinity), as F2FP does."""
    return np.asarray(values, dtype=np.float64).astype(np.float32).astype(np.float16)


# ---------------------------------------------------------------- array semantics

def embedding_forward(tokens, token_table, position_table):
    """x[t] = token_table[tokens[t] & 255] + position_table[t] (u32 tokens); returns (x f32, x half)."""
    T = len(tokens)
    rows = np.asarray(tokens, dtype=np.int64) & 0xFF
    x = (token_table.astype(np.float64)[rows] + position_table.astype(np.float64)[:T]).astype(np.float32)
    return x, x.astype(np.float16)


def embedding_backward(tokens, dx):
    """(dtoken [256, C], dposition [T, C]): each token row sums the gradients of the positions
    holding that token (& 255; 0 for a token the context lacks); the position rows are dx."""
    rows = np.asarray(tokens, dtype=np.int64) & 0xFF
    dx64 = dx.astype(np.float64)
    dtoken = np.zeros((VOCABULARY, dx.shape[1]))
    np.add.at(dtoken, rows, dx64)
    return dtoken.astype(np.float32), dx.astype(np.float32).copy()


def layernorm_forward(x, gain, bias, epsilon):
    """(y half, mean f32, rstd f32): y = (x - mean) * rstd * (1 + gain) + bias per row (the stored
    gain is gamma - 1), var the biased (1/C) variance, rstd = 1/sqrt(var + epsilon)."""
    x64 = x.astype(np.float64)
    mean = x64.mean(axis=1)
    var = ((x64 - mean[:, None]) ** 2).mean(axis=1)
    rstd = 1.0 / np.sqrt(var + float(epsilon))
    gamma = gain.astype(np.float32) + np.float32(1)             # binary32, as the kernel adds it
    y = (x64 - mean[:, None]) * rstd[:, None] * gamma.astype(np.float64) + bias.astype(np.float64)
    return half(y), mean.astype(np.float32), rstd.astype(np.float32)


def layernorm_backward(x, gain, mean, rstd, dy, dresidual=None):
    """(dx f32, dx half): the layer norm's input gradient for output gradient dy (mean and rstd
    as the forward saved them, gamma = 1 + gain), plus dresidual when given (the kernel's add)."""
    xhat = (x.astype(np.float64) - mean.astype(np.float64)[:, None]) * rstd.astype(np.float64)[:, None]
    gamma = (gain.astype(np.float32) + np.float32(1)).astype(np.float64)
    g = dy.astype(np.float64) * gamma
    dx = rstd.astype(np.float64)[:, None] * (g - g.mean(axis=1, keepdims=True)
                                             - xhat * (g * xhat).mean(axis=1, keepdims=True))
    if dresidual is not None:
        dx = dresidual.astype(np.float64) + dx
    out = dx.astype(np.float32)
    return out, out.astype(np.float16)


def layernorm_param_backward(x, mean, rstd, dy):
    """(dgain, dbias): column sums of dy * xhat and of dy (d gamma = d gain)."""
    xhat = (x.astype(np.float64) - mean.astype(np.float64)[:, None]) * rstd.astype(np.float64)[:, None]
    dy64 = dy.astype(np.float64)
    return (dy64 * xhat).sum(axis=0).astype(np.float32), dy64.sum(axis=0).astype(np.float32)


def bias_backward(dy_half):
    """The bias gradient: column sums of the binary16 output gradient, in binary32."""
    return dy_half.astype(np.float64).sum(axis=0).astype(np.float32)


def _causal(rows, T):
    """mask[r, j]: key j is visible to row r's query i = r mod T (j <= i)."""
    i = np.arange(rows) % T
    return np.arange(T)[None, :] <= i[:, None]


def softmax_forward(scores, T, scale):
    """(P half, P f32) over [H*T, T] rows: softmax_j(scale * S[r, j]) over j <= i, 0 beyond."""
    S = scores.astype(np.float64) * float(scale)
    visible = _causal(S.shape[0], T)
    S = np.where(visible, S, -np.inf)
    e = np.exp(S - S.max(axis=1, keepdims=True))
    P = e / e.sum(axis=1, keepdims=True)
    P32 = P.astype(np.float32)
    return P32.astype(np.float16), P32


def softmax_backward(P, dP, scale):
    """dS half = scale * P * (dP - sum_j P dP) per row: where the forward masked a key, P is 0
    and so is dS (for finite dP)."""
    P64, dP64 = P.astype(np.float64), dP.astype(np.float64)
    return half(float(scale) * P64 * (dP64 - (P64 * dP64).sum(axis=1, keepdims=True)))


def gelu(u):
    u = u.astype(np.float64)
    return 0.5 * u * (1.0 + np.tanh(GELU_K * (u + GELU_A * u ** 3)))


def gelu_derivative(u):
    u = u.astype(np.float64)
    t = np.tanh(GELU_K * (u + GELU_A * u ** 3))
    return 0.5 * (1.0 + t) + 0.5 * u * (1.0 - t * t) * GELU_K * (1.0 + 3.0 * GELU_A * u * u)


def gelu_forward(u):
    return half(gelu(u))


def gelu_backward(u, dy):
    return half(dy.astype(np.float64) * gelu_derivative(u))


def residual_add(a, b):
    return (a.astype(np.float64) + b.astype(np.float64)).astype(np.float32)


def cross_entropy(logits, targets, gradient_scale):
    """(dlogits half, row losses f32): loss_t = logsumexp(logits_t) - logits_t[target_t];
    dlogits = (softmax - onehot) * gradient_scale (lossScale / T for a mean loss)."""
    z = logits.astype(np.float64)
    rows = np.arange(z.shape[0])
    t = np.asarray(targets, dtype=np.int64) & 0xFF
    top = z.max(axis=1, keepdims=True)
    e = np.exp(z - top)
    total = e.sum(axis=1, keepdims=True)
    losses = np.log(total)[:, 0] - (z[rows, t] - top[:, 0])     # exact for a constant row of -8e37 too
    p = e / total
    p[rows, t] -= 1.0
    return half(p * float(gradient_scale)), losses.astype(np.float32)


def loss_copy(losses, inverse_rows, flag, counters, update):
    """(result u32[4], counters after, flag after): result = {mean loss (binary32 bits),
    skipped_now, updates, skipped}; skipped_now = update and flag != 0; an update moves the
    counters {updates, skipped}; the flag is cleared."""
    mean = np.float32(np.float64(np.asarray(losses, np.float32).sum(dtype=np.float64)) * float(np.float32(inverse_rows)))
    skipped_now = 1 if (update and flag) else 0
    updates, skipped = int(counters[0]), int(counters[1])
    if update:
        updates, skipped = updates + 1, skipped + skipped_now
    result = np.array([mean.view(np.uint32), skipped_now, updates, skipped], dtype=np.uint32)
    return result, np.array([updates, skipped], dtype=np.uint32), 0


def nonfinite_check(gradients, flag):
    """The flag, set to 1 when any gradient is infinite or NaN (else as it was)."""
    return 1 if not np.isfinite(gradients).all() else flag


def adamw_half(W, G, M, V, flag, alpha, epsilon, decay, beta1, one_minus_beta1, beta2,
               one_minus_beta2, multiplier=1.0):
    """(W, M, V, W half) after one AdamW step in binary32; with the flag set, nothing moves
    (W half is then what the caller had; None is returned for it)."""
    if flag:
        return W.copy(), M.copy(), V.copy(), None
    f = np.float32
    with np.errstate(all="ignore"):
        g = G.astype(np.float32) * f(multiplier)
        w = W.astype(np.float32) * f(decay)
        m = f(beta1) * M + f(one_minus_beta1) * g
        v = f(beta2) * V + f(one_minus_beta2) * (g * g)
        w = w - f(alpha) * m / (np.sqrt(v) + f(epsilon))
    w = w.astype(np.float32)
    return w, m.astype(np.float32), v.astype(np.float32), w.astype(np.float16)


def half_copy(src):
    return src.astype(np.float32).astype(np.float16)


def copy(words):
    return np.asarray(words, dtype=np.uint32).copy()


# ---------------------------------------------------------------- registered kernels

def _u32(launch, offset):
    return struct.unpack_from("<I", launch.parameters, offset)[0]


def _f32(launch, offset):
    return np.float32(struct.unpack_from("<f", launch.parameters, offset)[0])


def _f(memory, address, count):
    return memory.array(address, "<f4", count)


def _h(memory, address, count):
    return memory.array(address, "<f2", count)


def _embedding_forward(memory, launch):
    T, C = _u32(launch, 40), _u32(launch, 44)
    tokens = memory.array(launch.word(0), "<u4", T)
    x, xh = embedding_forward(tokens, _f(memory, launch.word(1), VOCABULARY * C).reshape(VOCABULARY, C),
                              _f(memory, launch.word(2), T * C).reshape(T, C))
    _f(memory, launch.word(3), T * C)[:] = x.ravel()
    _h(memory, launch.word(4), T * C)[:] = xh.ravel()


def _embedding_backward(memory, launch):
    T, C = _u32(launch, 40), _u32(launch, 44)
    tokens = memory.array(launch.word(0), "<u4", T)
    dt, dp = embedding_backward(tokens, _f(memory, launch.word(1), T * C).reshape(T, C))
    _f(memory, launch.word(2), VOCABULARY * C)[:] = dt.ravel()
    _f(memory, launch.word(3), T * C)[:] = dp.ravel()


def _finish_product(memory, launch, R, C, word, at, forward):
    """A layer norm after a partials-only product (gemm flag 512; S, alpha in word `at`): the
    product's D, as ref_gemm would have written it, to word `word`."""
    if not _u32(launch, 8 * at):
        return
    read = lambda address, dtype, count: memory.array(address, dtype, count)
    product = ref_gemm.product_of_partials(read, launch.word(at - 3 if forward else at - 1), R, C)
    v = (ref_gemm.epilogue(product, _f32(launch, 8 * at + 4), _f(memory, launch.word(10), C),
                           _f(memory, launch.word(9), R * C).reshape(R, C)) if forward
         else ref_gemm.epilogue(product, _f32(launch, 8 * at + 4)))
    _f(memory, launch.word(word), R * C)[:] = v.ravel()


def _layernorm_forward(memory, launch):
    R, C = _u32(launch, 48), _u32(launch, 52)
    _finish_product(memory, launch, R, C, 0, 11, forward=True)
    y, mean, rstd = layernorm_forward(_f(memory, launch.word(0), R * C).reshape(R, C),
                                      _f(memory, launch.word(1), C), _f(memory, launch.word(2), C),
                                      _f32(launch, 56))
    _h(memory, launch.word(3), R * C)[:] = y.ravel()
    _f(memory, launch.word(4), R)[:] = mean
    _f(memory, launch.word(5), R)[:] = rstd


def _layernorm_backward(memory, launch):
    R, C = _u32(launch, 64), _u32(launch, 68)
    add = _u32(launch, 76)
    _finish_product(memory, launch, R, C, 4, 11, forward=False)
    dresidual = _f(memory, launch.word(5), R * C).reshape(R, C).copy() if add else None
    dx, dxh = layernorm_backward(_f(memory, launch.word(0), R * C).reshape(R, C), _f(memory, launch.word(1), C),
                                 _f(memory, launch.word(2), R), _f(memory, launch.word(3), R),
                                 _f(memory, launch.word(4), R * C).reshape(R, C), dresidual)
    _f(memory, launch.word(6), R * C)[:] = dx.ravel()
    _h(memory, launch.word(7), R * C)[:] = dxh.ravel()


def _layernorm_param_backward(memory, launch):
    R, C = _u32(launch, 48), _u32(launch, 52)
    # batch z: each pointer moved by z times its stride (binary32 elements): x, dy, mean, rstd, dgain, dbias
    sx, sdy, smean, srstd, sgain, sbias = (4 * _u32(launch, 56 + 4 * i) for i in range(6))
    for z in range(_u32(launch, 80)):
        dgain, dbias = layernorm_param_backward(_f(memory, launch.word(0) + z * sx, R * C).reshape(R, C),
                                                _f(memory, launch.word(1) + z * smean, R),
                                                _f(memory, launch.word(2) + z * srstd, R),
                                                _f(memory, launch.word(3) + z * sdy, R * C).reshape(R, C))
        _f(memory, launch.word(4) + z * sgain, C)[:] = dgain
        _f(memory, launch.word(5) + z * sbias, C)[:] = dbias


def _bias_backward(memory, launch):
    R, C = _u32(launch, 16), _u32(launch, 20)
    _f(memory, launch.word(1), C)[:] = bias_backward(_h(memory, launch.word(0), R * C).reshape(R, C))


def _softmax_forward(memory, launch):
    rows, T = _u32(launch, 24), _u32(launch, 28)
    Ph, P = softmax_forward(_f(memory, launch.word(0), rows * T).reshape(rows, T), T, _f32(launch, 32))
    _h(memory, launch.word(1), rows * T)[:] = Ph.ravel()
    _f(memory, launch.word(2), rows * T)[:] = P.ravel()


def _attention_forward(memory, launch):
    """The three launches coppelius-attention-forward replaced (attention.py): the products
    through ref_gemm's kernels, the softmax through _softmax_forward."""
    from . import attention, ref_gemm
    attention.run(memory, launch, {**ref_gemm.KERNELS, "coppelius-softmax-forward": _softmax_forward})


def _attention_backward(memory, launch):
    """The three launches coppelius-attention-backward stands for (attention.backward_parts)."""
    from . import attention, ref_gemm
    attention.run(memory, launch, {**ref_gemm.KERNELS, "coppelius-softmax-backward": _softmax_backward},
                  attention.backward_parts)


def _attention_backward_kv(memory, launch):
    """The two products coppelius-attention-backward-kv stands for (attention.kv_parts): dv and dk
    through ref_gemm's tn product."""
    from . import attention, ref_gemm
    attention.run(memory, launch, ref_gemm.KERNELS, attention.kv_parts)


def _softmax_backward(memory, launch):
    rows, T = _u32(launch, 24), _u32(launch, 28)
    dS = softmax_backward(_f(memory, launch.word(0), rows * T).reshape(rows, T),
                          _f(memory, launch.word(1), rows * T).reshape(rows, T), _f32(launch, 32))
    _h(memory, launch.word(2), rows * T)[:] = dS.ravel()


def _gelu_forward(memory, launch):
    N = _u32(launch, 16)
    _h(memory, launch.word(1), N)[:] = gelu_forward(_f(memory, launch.word(0), N))


def _gelu_backward(memory, launch):
    N = _u32(launch, 24)
    _h(memory, launch.word(2), N)[:] = gelu_backward(_f(memory, launch.word(0), N), _f(memory, launch.word(1), N))


def _residual_add(memory, launch):
    N = _u32(launch, 24)
    _f(memory, launch.word(2), N)[:] = residual_add(_f(memory, launch.word(0), N), _f(memory, launch.word(1), N))


def _cross_entropy(memory, launch):
    T = _u32(launch, 32)
    d, losses = cross_entropy(_f(memory, launch.word(0), T * VOCABULARY).reshape(T, VOCABULARY),
                              memory.array(launch.word(1), "<u4", T), _f32(launch, 36))
    _h(memory, launch.word(2), T * VOCABULARY)[:] = d.ravel()
    _f(memory, launch.word(3), T)[:] = losses


def _loss_copy(memory, launch):
    T = _u32(launch, 32)
    flag = memory.array(launch.word(2), "<u4", 1)
    counters = memory.array(launch.word(3), "<u4", 2)
    result, after, cleared = loss_copy(_f(memory, launch.word(0), T), _f32(launch, 36), int(flag[0]), counters,
                                       _u32(launch, 40))
    memory.array(launch.word(1), "<u4", 4)[:] = result
    counters[:] = after
    flag[0] = cleared


def _nonfinite_check(memory, launch):
    N = _u32(launch, 16)
    flag = memory.array(launch.word(1), "<u4", 1)
    flag[0] = nonfinite_check(_f(memory, launch.word(0), N), int(flag[0]))


def _adamw_half(memory, launch):
    N = _u32(launch, 76)
    flag = int(memory.array(launch.word(5), "<u4", 1)[0])
    W, G, M, V = (_f(memory, launch.word(i), N) for i in range(4))
    w, m, v, wh = adamw_half(W, G, M, V, flag, *(_f32(launch, 48 + 4 * k) for k in range(7)), _f32(launch, 84))
    if wh is not None:
        W[:], M[:], V[:] = w, m, v
        _h(memory, launch.word(4), N)[:] = wh


def _half_copy(memory, launch):
    N = _u32(launch, 16)
    _h(memory, launch.word(1), N)[:] = half_copy(_f(memory, launch.word(0), N))


def _copy(memory, launch):
    N = _u32(launch, 16)
    memory.array(launch.word(1), "<u4", N)[:] = copy(memory.array(launch.word(0), "<u4", N))


KERNELS = {
    "coppelius-embedding-forward": _embedding_forward,
    "coppelius-embedding-backward": _embedding_backward,
    "coppelius-layernorm-forward": _layernorm_forward,
    "coppelius-layernorm-backward": _layernorm_backward,
    "coppelius-layernorm-param-backward": _layernorm_param_backward,
    "coppelius-bias-backward": _bias_backward,
    "coppelius-softmax-forward": _softmax_forward,
    "coppelius-attention-forward": _attention_forward,
    "coppelius-softmax-backward": _softmax_backward,
    "coppelius-attention-backward": _attention_backward,
    "coppelius-attention-backward-kv": _attention_backward_kv,
    "coppelius-gelu-forward": _gelu_forward,
    "coppelius-gelu-backward": _gelu_backward,
    "coppelius-residual-add": _residual_add,
    "coppelius-cross-entropy": _cross_entropy,
    "coppelius-loss-copy": _loss_copy,
    "coppelius-nonfinite-check": _nonfinite_check,
    "coppelius-adamw-half": _adamw_half,
    "coppelius-half-copy": _half_copy,
    "coppelius-copy": _copy,
}
