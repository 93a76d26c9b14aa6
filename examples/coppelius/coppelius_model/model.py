"""One Coppelius update in NumPy, in the arithmetic its kernels do (docs/coppelius.md).

Every value is computed in binary64 and rounded where a kernel stores it: to
binary16 where the stored tensor is a matrix product's input (the ``*16``
names), to binary32 everywhere else.  So a matrix product is exact products of
binary16 inputs summed and rounded once to binary32 (a tensor core sums in
binary32, within the tolerance docs/coppelius.md derives), and an elementwise
kernel is its formula rounded once.  With ``Arithmetic.BINARY64`` nothing is
rounded: the same code is the exact math, which tests/coppelius/
test_gradient_check.py holds to finite differences.

AdamW is elementwise binary32, one rounding per operation (as the kernel), and
skips the whole update -- no master weight, moment or half copy written -- when
any gradient is not finite, counting it.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from .config import CoppeliusConfig


@dataclass(frozen=True)
class Arithmetic:
    """Where stores round: ``mixed`` (binary16 matrix-product inputs, binary32 otherwise)
    or none (binary64 throughout, for the gradient check)."""

    mixed: bool

    def r32(self, x):
        return x.astype(np.float32).astype(np.float64) if self.mixed else np.asarray(x, dtype=np.float64)

    def r16(self, x):
        # a kernel rounds its binary32 result to binary16 (never binary64 straight to binary16)
        with np.errstate(over="ignore"):
            return (np.asarray(x).astype(np.float32).astype(np.float16).astype(np.float64) if self.mixed
                    else np.asarray(x, dtype=np.float64))


MIXED = Arithmetic(True)
BINARY64 = Arithmetic(False)

GELU_C = math.sqrt(2.0 / math.pi)


def gelu(u):
    return 0.5 * u * (1.0 + np.tanh(GELU_C * (u + 0.044715 * u ** 3)))


def gelu_derivative(u):
    inner = GELU_C * (u + 0.044715 * u ** 3)
    t = np.tanh(inner)
    return 0.5 * (1.0 + t) + 0.5 * u * (1.0 - t * t) * GELU_C * (1.0 + 3 * 0.044715 * u * u)


def view(flat, config: CoppeliusConfig, name: str):
    tensor = config.tensor(name)
    return flat[tensor.offset:tensor.end].reshape(tensor.shape)


@dataclass
class LayerNormSaved:
    x: np.ndarray        # the input (binary32)
    mean: np.ndarray     # [T] binary32
    rstd: np.ndarray     # [T] binary32
    xhat: np.ndarray


@dataclass
class Forward:
    """What the forward pass stores for the backward (the arena's activations)."""

    tokens: np.ndarray
    targets: np.ndarray
    half: np.ndarray                      # the half copy used (binary16 values, as binary64)
    layers: list = field(default_factory=list)
    final: LayerNormSaved | None = None
    xf16: np.ndarray | None = None
    logits: np.ndarray | None = None
    losses: np.ndarray | None = None      # [T] binary32 row losses
    dlogits16: np.ndarray | None = None   # S (softmax - onehot) / T, binary16
    predictions: np.ndarray | None = None  # [T] argmax of each row

    @property
    def loss(self) -> float:
        return float(np.float32(np.sum(self.losses, dtype=np.float64) / len(self.losses)))


def layer_norm(x, gain, bias, eps, a: Arithmetic):
    """Returns the binary16 output (the next product's input) and what the backward needs."""
    mean = a.r32(x.mean(axis=1))
    var = ((x - mean[:, None]) ** 2).mean(axis=1)
    rstd = a.r32(1.0 / np.sqrt(var + eps))
    xhat = (x - mean[:, None]) * rstd[:, None]
    out = a.r16(xhat * (1.0 + gain) + bias)
    return out, LayerNormSaved(x, mean, rstd, xhat)


def layer_norm_backward(saved: LayerNormSaved, gain, dy, a: Arithmetic):
    """dX (binary32), d gain, d bias (column sums over the rows)."""
    dxhat = dy * (1.0 + gain)
    dx = saved.rstd[:, None] * (dxhat - dxhat.mean(axis=1, keepdims=True)
                                - saved.xhat * (dxhat * saved.xhat).mean(axis=1, keepdims=True))
    return dx, a.r32((dy * saved.xhat).sum(axis=0)), a.r32(dy.sum(axis=0))


def causal_softmax(scores, a: Arithmetic):
    """Row softmax of [heads, T, T] scores with j > i masked: probabilities (binary32), exact 0 masked."""
    t = scores.shape[-1]
    mask = np.triu(np.ones((t, t), dtype=bool), k=1)
    s = np.where(mask, -np.inf, scores)
    s = s - s.max(axis=-1, keepdims=True)
    e = np.exp(s)
    return a.r32(e / e.sum(axis=-1, keepdims=True))


def forward(config: CoppeliusConfig, master, half, tokens, targets, a: Arithmetic = MIXED,
            scale: float | None = None) -> Forward:
    """The forward pass and the cross-entropy (with its scaled gradient) for one context."""
    T, d, H, dh = config.context, config.width, config.heads, config.head_dimension
    S = config.hyper.loss_scale if scale is None else scale
    eps = float(np.float32(config.hyper.layer_norm_epsilon))   # the kernel reads it as binary32
    P = lambda name: view(master, config, name)       # binary32 master (embeddings, gains, biases)
    W = lambda name: view(half, config, name)         # binary16 half copy (matrix-product inputs)
    tokens = np.asarray(tokens, dtype=np.int64)
    targets = np.asarray(targets, dtype=np.int64)
    out = Forward(tokens, targets, half)
    x = a.r32(P("wte")[tokens] + P("wpe")[:T])
    att_scale = 1.0 / math.sqrt(dh)
    for layer in range(config.layers):
        n = f"h{layer}."
        a16, ln1 = layer_norm(x, P(n + "ln1.g"), P(n + "ln1.b"), eps, a)
        qkv16 = a.r16(a16 @ W(n + "wqkv") + P(n + "bqkv"))
        q, k, v = (qkv16[:, i * d:(i + 1) * d].reshape(T, H, dh).transpose(1, 0, 2) for i in range(3))
        scores = a.r32(att_scale * (q @ k.transpose(0, 2, 1)))
        p = causal_softmax(scores, a)
        p16 = a.r16(p)
        o16 = a.r16(p16 @ v).transpose(1, 0, 2).reshape(T, d)
        h = a.r32(o16 @ W(n + "wproj") + P(n + "bproj") + x)
        b16, ln2 = layer_norm(h, P(n + "ln2.g"), P(n + "ln2.b"), eps, a)
        u = a.r32(b16 @ W(n + "wfc") + P(n + "bfc"))
        g16 = a.r16(gelu(u))
        x_next = a.r32(g16 @ W(n + "wfcproj") + P(n + "bfcproj") + h)
        out.layers.append(dict(ln1=ln1, a16=a16, qkv16=qkv16, q=q, k=k, v=v, p=p, p16=p16, o16=o16,
                               ln2=ln2, b16=b16, u=u, g16=g16))
        x = x_next
    out.xf16, out.final = layer_norm(x, P("lnf.g"), P("lnf.b"), eps, a)
    out.logits = a.r32(out.xf16 @ W("head"))
    top = out.logits.max(axis=1, keepdims=True)
    e = np.exp(out.logits - top)
    total = e.sum(axis=1, keepdims=True)
    rows = np.arange(T)
    out.losses = a.r32((np.log(total) + top)[:, 0] - out.logits[rows, targets])
    softmax = e / total
    softmax[rows, targets] -= 1.0
    out.dlogits16 = a.r16(softmax * (S / T))
    out.predictions = np.argmax(out.logits, axis=1)
    return out


def backward(config: CoppeliusConfig, master, fwd: Forward, a: Arithmetic = MIXED) -> np.ndarray:
    """The gradient of S x the mean loss, flat (binary32 values); every element written."""
    T, d, H, dh = config.context, config.width, config.heads, config.head_dimension
    P = lambda name: view(master, config, name)
    W = lambda name: view(fwd.half, config, name)
    grad = np.zeros(config.parameter_count, dtype=np.float64)

    def put(name, value):
        view(grad, config, name)[...] = a.r32(value)

    def bias_grad_cast(name, dy):
        # the binary16 gradient the weight-gradient product reads; the bias gradient is its
        # column sum (the weight-gradient product's column sums, coppelius-gemm-tn flag 32)
        dy16 = a.r16(dy)
        put(name, dy16.sum(axis=0))
        return dy16

    put("head", fwd.xf16.T @ fwd.dlogits16)
    dxf = a.r32(fwd.dlogits16 @ W("head").T)
    dx, dg, db = layer_norm_backward(fwd.final, P("lnf.g"), dxf, a)
    dres = a.r32(dx)
    put("lnf.g", dg)
    put("lnf.b", db)
    att_scale = 1.0 / math.sqrt(dh)
    for layer in reversed(range(config.layers)):
        n, s = f"h{layer}.", fwd.layers[layer]
        # MLP: x_next = g16 Wfcproj + bfcproj + h
        dz16 = bias_grad_cast(n + "bfcproj", dres)
        put(n + "wfcproj", s["g16"].T @ dz16)
        dg_ = a.r32(dz16 @ W(n + "wfcproj").T)
        du = a.r32(dg_ * gelu_derivative(s["u"]))
        du16 = bias_grad_cast(n + "bfc", du)
        put(n + "wfc", s["b16"].T @ du16)
        dln2 = a.r32(du16 @ W(n + "wfc").T)
        dx, dg, db = layer_norm_backward(s["ln2"], P(n + "ln2.g"), dln2, a)
        dres = a.r32(dres + dx)
        put(n + "ln2.g", dg)
        put(n + "ln2.b", db)
        # attention: h = o16 Wproj + bproj + x
        dh16 = bias_grad_cast(n + "bproj", dres)
        put(n + "wproj", s["o16"].T @ dh16)
        do16 = a.r16(dh16 @ W(n + "wproj").T).reshape(T, H, dh).transpose(1, 0, 2)
        dp = a.r32(do16 @ s["v"].transpose(0, 2, 1))
        dv = a.r32(s["p16"].transpose(0, 2, 1) @ do16)
        p = s["p"]
        ds16 = a.r16(att_scale * p * (dp - (dp * p).sum(axis=-1, keepdims=True)))
        dq = a.r32(ds16 @ s["k"])
        dk = a.r32(ds16.transpose(0, 2, 1) @ s["q"])
        dqkv = np.concatenate([t.transpose(1, 0, 2).reshape(T, d) for t in (dq, dk, dv)], axis=1)
        dqkv16 = bias_grad_cast(n + "bqkv", dqkv)
        put(n + "wqkv", s["a16"].T @ dqkv16)
        dln1 = a.r32(dqkv16 @ W(n + "wqkv").T)
        dx, dg, db = layer_norm_backward(s["ln1"], P(n + "ln1.g"), dln1, a)
        dres = a.r32(dres + dx)
        put(n + "ln1.g", dg)
        put(n + "ln1.b", db)
    wte = np.zeros((config.vocabulary, d))
    for t in range(T):                       # in position order, as the kernel sums
        wte[fwd.tokens[t]] += dres[t]
    put("wte", wte)
    wpe = np.zeros(view(grad, config, "wpe").shape)
    wpe[:T] = dres
    put("wpe", wpe)
    return grad


# ---- AdamW ----

@dataclass(frozen=True)
class AdamWScalars:
    """What the host writes into each AdamW launch for global step t (binary64, rounded to binary32)."""

    step_size: np.float32
    epsilon: np.float32


def adamw_scalars(config: CoppeliusConfig, t: int) -> AdamWScalars:
    h = config.hyper
    lr, b1, b2 = float(h.learning_rate), float(h.beta1), float(h.beta2)
    root = math.sqrt(1.0 - b2 ** t)
    return AdamWScalars(np.float32(lr * root / (1.0 - b1 ** t)),
                        np.float32(float(h.epsilon * h.loss_scale) * root))


def decay_factor(config: CoppeliusConfig, decayed: bool) -> np.float32:
    h = config.hyper
    return np.float32(1 - h.learning_rate * h.weight_decay) if decayed else np.float32(1.0)


@dataclass
class State:
    """The arena's learner state: master P, moments M and V (binary32), the half copy H
    (binary16), the skipped-update count and the global step."""

    P: np.ndarray
    M: np.ndarray
    V: np.ndarray
    H: np.ndarray
    skipped: int = 0
    step: int = 0

    def copy(self) -> "State":
        return State(self.P.copy(), self.M.copy(), self.V.copy(), self.H.copy(), self.skipped, self.step)


def fresh_state(config: CoppeliusConfig, seed: int = 0) -> State:
    """A fresh state: every parameter uniform in [-0.01, 0.01] (the layer-norm gains are
    offsets from 1), moments zero."""
    rng = np.random.default_rng(seed)
    P = rng.uniform(-0.01, 0.01, config.parameter_count).astype(np.float32)
    zeros = np.zeros(config.parameter_count, dtype=np.float32)
    return State(P, zeros.copy(), zeros.copy(), P.astype(np.float16))


def adamw(config: CoppeliusConfig, state: State, grad32: np.ndarray) -> bool:
    """One AdamW update over both pieces, in place; False (nothing written but the count)
    when a gradient is not finite."""
    state.step += 1
    if not np.isfinite(grad32).all():
        state.skipped += 1
        return False
    s = adamw_scalars(config, state.step)
    h = config.hyper
    b1, b2 = np.float32(h.beta1), np.float32(h.beta2)
    ob1, ob2 = np.float32(1 - h.beta1), np.float32(1 - h.beta2)
    for first, count, decayed in config.pieces():
        sl = slice(first, first + count)
        g = grad32[sl]
        w = state.P[sl] * decay_factor(config, decayed)
        m = b1 * state.M[sl] + ob1 * g
        v = b2 * state.V[sl] + ob2 * (g * g)
        w = w - s.step_size * m / (np.sqrt(v) + s.epsilon)
        state.P[sl], state.M[sl], state.V[sl] = w, m, v
        state.H[sl] = w.astype(np.float16)
    return True


@dataclass
class UpdateResult:
    loss: float
    losses: np.ndarray
    applied: bool
    grad: np.ndarray


def update(config: CoppeliusConfig, state: State, tokens, targets, a: Arithmetic = MIXED,
           corrupt: tuple[int, float] | None = None) -> UpdateResult:
    """One whole update (forward, backward, AdamW) on one context, in place.  ``corrupt``
    (index, value) overwrites one gradient element before AdamW (the injected-infinity test)."""
    fwd = forward(config, state.P.astype(np.float64), state.H.astype(np.float64), tokens, targets, a)
    grad = backward(config, state.P.astype(np.float64), fwd, a).astype(np.float32)
    if corrupt is not None:
        grad[corrupt[0]] = corrupt[1]
    applied = adamw(config, state, grad)
    return UpdateResult(fwd.loss, fwd.losses.astype(np.float32), applied, grad)


def context_at(data: bytes, position: int, context: int):
    """The inputs at a stream position and the targets one byte on."""
    window = np.frombuffer(data[position:position + context + 1], dtype=np.uint8)
    if len(window) != context + 1:
        raise ValueError(f"the stream has no {context + 1} bytes at position {position}")
    return window[:-1], window[1:]
