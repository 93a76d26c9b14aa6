"""Coppelius's kernels in NumPy, in the registered-kernel form of the reference runner
(docs/host-steps.md, "Reference kernels"): each reads its parameter words from its
launch and works on memory by GPU address, in the same arithmetic as model.py
(binary64 inside, rounded where the kernel stores).

These are CMODEL's own equivalents of CGEMM's ref_gemm.py and CKERN's ref_ops.py
(examples/coppelius/reference_kernels.py prefers theirs where they exist); the
parameter words are the kernels' contracts as graph.py builds them.
tests/coppelius/test_graph_executes.py runs a whole update through them and
compares it with model.update.
"""
from __future__ import annotations

import functools

import numpy as np
from numpy.lib.stride_tricks import as_strided

from . import attention
from .memory import Launched, ViewedMemory
from .model import MIXED, causal_softmax, gelu, gelu_derivative

A = MIXED


def _pair(launch, word):
    return launch.u32(8 * word), launch.u32(8 * word + 4)


def _pair_f32(launch, word):
    return launch.f32(8 * word), launch.f32(8 * word + 4)


def _matrix(memory, address, dtype, batches, rows, cols, s, row_stride, col_stride):
    """A strided (batches, rows, cols) view of memory at `address` (element strides)."""
    count = (batches - 1) * s + (rows - 1) * row_stride + (cols - 1) * col_stride + 1
    flat = memory.array(address, dtype, count)
    size = flat.itemsize
    return as_strided(flat, (batches, rows, cols), (s * size, row_stride * size, col_stride * size))


def _gemm(form):
    def kernel(memory, launch):
        a, b, d, dh, r, bias = (launch.word(i) for i in range(6))
        m, n = _pair(launch, 6)
        k, flags = _pair(launch, 7)
        lda, ldb = _pair(launch, 8)
        ldd, ldh = _pair(launch, 9)
        sa, sb = _pair(launch, 10)
        sd, sh = _pair(launch, 11)
        alpha = launch.f32(8 * 12)
        batches = launch.u32(8 * 12 + 4)
        if form == "tn":
            av = _matrix(memory, a, "<f2", batches, m, k, sa, 1, lda)
        else:
            av = _matrix(memory, a, "<f2", batches, m, k, sa, lda, 1)
        if form == "nt":
            bv = _matrix(memory, b, "<f2", batches, k, n, sb, 1, ldb)
        else:
            bv = _matrix(memory, b, "<f2", batches, k, n, sb, ldb, 1)
        product = av.astype(np.float64) @ bv.astype(np.float64)
        if flags & 32 and form != "nt" and not flags & 16:   # column sums of B (gemm flag 32): the bias gradient
            memory.array(launch.word(15), "<f4", n)[...] = bv[0].astype(np.float64).sum(axis=0)
        if flags & 16 and flags & PARTIALS:     # partials only: the next launch, a layer norm, adds them
            store_partials(memory, launch.word(13), product.sum(axis=0))
            return
        if flags & 16:          # split K (CGEMM.md, s4): batch z is split z; W the partials, D the whole
            memory.array(launch.word(13), "<f4", batches * m * n)[...] = product.astype(np.float32).ravel()
            product, batches = product.sum(axis=0, keepdims=True), 1
        v = alpha * product
        if flags & 2:
            v = v + memory.array(bias, "<f4", n).astype(np.float64)
        if flags & 1:
            v = v + _matrix(memory, r, "<f4", batches, m, n, sd, ldd, 1).astype(np.float64)
        v32 = v.astype(np.float32)
        if flags & 128:         # v *= gelu'(U), U with D's strides: coppelius-gelu-backward's rounding
            u = _matrix(memory, launch.word(16), "<f4", batches, m, n, sd, ldd, 1).astype(np.float64)
            v32 = (v32.astype(np.float64) * gelu_derivative(u)).astype(np.float32)
        if not flags & 8:
            _matrix(memory, d, "<f4", batches, m, n, sd, ldd, 1)[...] = v32
        if flags & 4:
            with np.errstate(over="ignore"):
                half = A.r16(gelu(v32.astype(np.float64))) if flags & 64 else v32.astype(np.float16)
                _matrix(memory, dh, "<f2", batches, m, n, sh, ldh, 1)[...] = half
    return kernel


def _rows(memory, address, dtype, rows, cols):
    return memory.array(address, dtype, rows * cols).reshape(rows, cols)


# Partials only (gemm flag 512; graph.py PARTIALS): the device's blocks leave their binary32 partials in
# W and the layer norm after the product adds them.  These kernels sum in binary64 and round once
# (model.py), which binary32 partials cannot reproduce, so the reference's product keeps its binary64
# sum P in W's first 8 M N bytes (W has 4 S M N, S >= 2) and the norm reads it back: a layout private
# to the reference kernels, which never modelled W's bytes; x and dy come out as the product's D did.
PARTIALS = 512


def store_partials(memory, address, product):
    memory.array(address, "<f8", product.size)[...] = product.ravel()


def product_of_partials(memory, address, rows, cols):
    """The binary64 product a partials-only launch left at `address` (store_partials)."""
    return memory.array(address, "<f8", rows * cols).reshape(rows, cols)


def embedding_forward(memory, launch):
    t, c = _pair(launch, 5)
    tokens = memory.array(launch.word(0), "<u4", t).astype(np.int64)
    wte = _rows(memory, launch.word(1), "<f4", 256, c).astype(np.float64)
    wpe = _rows(memory, launch.word(2), "<f4", t, c).astype(np.float64)
    x = (wte[tokens] + wpe).astype(np.float32)
    _rows(memory, launch.word(3), "<f4", t, c)[...] = x
    _rows(memory, launch.word(4), "<f2", t, c)[...] = x.astype(np.float16)


def layernorm_forward(memory, launch):
    r, c = _pair(launch, 6)
    eps, _ = _pair_f32(launch, 7)
    if launch.u32(8 * 11):      # x = the split product's alpha P + bias + R, written as its D (graph.norm_partials)
        v = (launch.f32(8 * 11 + 4) * product_of_partials(memory, launch.word(8), r, c)
             + memory.array(launch.word(10), "<f4", c).astype(np.float64)
             + _rows(memory, launch.word(9), "<f4", r, c).astype(np.float64))
        _rows(memory, launch.word(0), "<f4", r, c)[...] = v.astype(np.float32)
    x = _rows(memory, launch.word(0), "<f4", r, c).astype(np.float64)
    gain = memory.array(launch.word(1), "<f4", c).astype(np.float64)
    bias = memory.array(launch.word(2), "<f4", c).astype(np.float64)
    mean = A.r32(x.mean(axis=1))
    rstd = A.r32(1.0 / np.sqrt(((x - mean[:, None]) ** 2).mean(axis=1) + float(np.float32(eps))))
    xhat = (x - mean[:, None]) * rstd[:, None]
    _rows(memory, launch.word(3), "<f2", r, c)[...] = A.r16(xhat * (1.0 + gain) + bias)
    memory.array(launch.word(4), "<f4", r)[...] = mean
    memory.array(launch.word(5), "<f4", r)[...] = rstd


def _xhat(memory, x_address, mean_address, rstd_address, r, c):
    x = _rows(memory, x_address, "<f4", r, c).astype(np.float64)
    mean = memory.array(mean_address, "<f4", r).astype(np.float64)
    rstd = memory.array(rstd_address, "<f4", r).astype(np.float64)
    return (x - mean[:, None]) * rstd[:, None], rstd


def layernorm_backward(memory, launch):
    r, c = _pair(launch, 8)
    _, add = launch.f32(8 * 9), launch.u32(8 * 9 + 4)
    xhat, rstd = _xhat(memory, launch.word(0), launch.word(2), launch.word(3), r, c)
    gain = memory.array(launch.word(1), "<f4", c).astype(np.float64)
    if launch.u32(8 * 11):      # dy = the split product's alpha P, written as its D (graph.norm_partials)
        v = launch.f32(8 * 11 + 4) * product_of_partials(memory, launch.word(10), r, c)
        _rows(memory, launch.word(4), "<f4", r, c)[...] = v.astype(np.float32)
    dy = _rows(memory, launch.word(4), "<f4", r, c).astype(np.float64)
    dxhat = dy * (1.0 + gain)
    dx = rstd[:, None] * (dxhat - dxhat.mean(axis=1, keepdims=True)
                          - xhat * (dxhat * xhat).mean(axis=1, keepdims=True))
    if add:
        dx = _rows(memory, launch.word(5), "<f4", r, c).astype(np.float64) + dx
    out = dx.astype(np.float32)
    _rows(memory, launch.word(6), "<f4", r, c)[...] = out
    _rows(memory, launch.word(7), "<f2", r, c)[...] = out.astype(np.float16)


def layernorm_param_backward(memory, launch):
    """B layer norms' gain and bias gradients; batch z's pointers are words 0..5 moved by z times
    their batch strides (words 7..9, binary32 elements), B at word 10."""
    r, c = _pair(launch, 6)
    sx, sdy = _pair(launch, 7)
    smean, srstd = _pair(launch, 8)
    sgain, sbias = _pair(launch, 9)
    batches, _ = _pair(launch, 10)
    for z in range(batches):
        xhat, _ = _xhat(memory, launch.word(0) + 4 * z * sx, launch.word(1) + 4 * z * smean,
                        launch.word(2) + 4 * z * srstd, r, c)
        dy = _rows(memory, launch.word(3) + 4 * z * sdy, "<f4", r, c).astype(np.float64)
        memory.array(launch.word(4) + 4 * z * sgain, "<f4", c)[...] = (dy * xhat).sum(axis=0)
        memory.array(launch.word(5) + 4 * z * sbias, "<f4", c)[...] = dy.sum(axis=0)


def bias_backward(memory, launch):
    r, c = _pair(launch, 2)
    dy = _rows(memory, launch.word(0), "<f2", r, c).astype(np.float64)
    memory.array(launch.word(1), "<f4", c)[...] = dy.sum(axis=0)


def softmax_forward(memory, launch):
    """coppelius-softmax-forward (no longer launched: a part of coppelius-attention-forward, attention.py)."""
    rows, t = _pair(launch, 3)
    scale, _ = _pair_f32(launch, 4)
    scores = _rows(memory, launch.word(0), "<f4", rows, t).astype(np.float64).reshape(-1, t, t)
    p = causal_softmax(float(scale) * scores, A).reshape(rows, t)
    _rows(memory, launch.word(1), "<f2", rows, t)[...] = A.r16(p)
    _rows(memory, launch.word(2), "<f4", rows, t)[...] = p


def attention_forward(memory, launch):
    """scores = q k^T, p = causal softmax(scores scale), o16 = p16 v: the three launches it replaced."""
    attention.run(memory, launch, {"coppelius-gemm-nt": _gemm("nt"), "coppelius-gemm-nn": _gemm("nn"),
                                   "coppelius-softmax-forward": softmax_forward})


def attention_backward(memory, launch):
    """dp = do16 v^T, ds16 = p (dp - rowsum(dp p)) scale, dq = ds16 k: the three launches (attention.py)."""
    attention.run(memory, launch, {"coppelius-gemm-nt": _gemm("nt"), "coppelius-gemm-nn": _gemm("nn"),
                                   "coppelius-softmax-backward": softmax_backward}, attention.backward_parts)


def attention_backward_kv(memory, launch):
    """dv = p16^T do16, dk = ds16^T q (per head): the two tn products (attention.kv_parts)."""
    attention.run(memory, launch, {"coppelius-gemm-tn": _gemm("tn")}, attention.kv_parts)


def softmax_backward(memory, launch):
    rows, t = _pair(launch, 3)
    scale, _ = _pair_f32(launch, 4)
    p = _rows(memory, launch.word(0), "<f4", rows, t).astype(np.float64)
    dp = _rows(memory, launch.word(1), "<f4", rows, t).astype(np.float64)
    _rows(memory, launch.word(2), "<f2", rows, t)[...] = A.r16(float(scale) * p * (dp - (dp * p).sum(axis=1, keepdims=True)))


def gelu_forward(memory, launch):
    n, _ = _pair(launch, 2)
    u = memory.array(launch.word(0), "<f4", n).astype(np.float64)
    memory.array(launch.word(1), "<f2", n)[...] = A.r16(gelu(u))


def gelu_backward(memory, launch):
    n, _ = _pair(launch, 3)
    u = memory.array(launch.word(0), "<f4", n).astype(np.float64)
    dy = memory.array(launch.word(1), "<f4", n).astype(np.float64)
    memory.array(launch.word(2), "<f2", n)[...] = A.r16(dy * gelu_derivative(u))


def cross_entropy(memory, launch):
    t = launch.u32(8 * 4)
    gscale = launch.f32(8 * 4 + 4)
    logits = _rows(memory, launch.word(0), "<f4", t, 256).astype(np.float64)
    targets = memory.array(launch.word(1), "<u4", t).astype(np.int64)
    top = logits.max(axis=1, keepdims=True)
    e = np.exp(logits - top)
    total = e.sum(axis=1, keepdims=True)
    rows = np.arange(t)
    memory.array(launch.word(3), "<f4", t)[...] = (np.log(total) + top)[:, 0] - logits[rows, targets]
    softmax = e / total
    softmax[rows, targets] -= 1.0
    _rows(memory, launch.word(2), "<f2", t, 256)[...] = A.r16(softmax * float(gscale))


def loss_copy(memory, launch):
    t = launch.u32(8 * 4)
    update = launch.u32(8 * 5)
    losses = memory.array(launch.word(0), "<f4", t).astype(np.float64)
    flag = memory.array(launch.word(2), "<u4", 1)
    counters = memory.array(launch.word(3), "<u4", 2)
    skipped_now = int(flag[0] != 0) if update else 0
    if update:
        counters[0] += 1
        counters[1] += skipped_now
    flag[0] = 0
    result = memory.array(launch.word(1), "<u4", 4)
    result[0] = np.float32(losses.sum() / t).view(np.uint32)
    result[1:] = (skipped_now, counters[0], counters[1])


def nonfinite_check(memory, launch):
    n, _ = _pair(launch, 2)
    if not np.isfinite(memory.array(launch.word(0), "<f4", n)).all():
        memory.array(launch.word(1), "<u4", 1)[0] = 1


def adamw_half(memory, launch):
    n = launch.u32(8 * 9 + 4)
    if memory.array(launch.word(5), "<u4", 1)[0]:
        return
    alpha, eps = (np.float32(x) for x in _pair_f32(launch, 6))
    decay, beta1 = (np.float32(x) for x in _pair_f32(launch, 7))
    one_minus_beta1, beta2 = (np.float32(x) for x in _pair_f32(launch, 8))
    one_minus_beta2 = np.float32(launch.f32(8 * 9))
    multiplier = np.float32(launch.f32(8 * 10 + 4))     # byte 80 is t, the host's (unread)
    W, G, M, V = (memory.array(launch.word(i), "<f4", n) for i in range(4))
    g = G * multiplier
    w = W * decay
    m = beta1 * M + one_minus_beta1 * g
    v = beta2 * V + one_minus_beta2 * (g * g)
    w = w - alpha * m / (np.sqrt(v) + eps)
    W[...], M[...], V[...] = w, m, v
    memory.array(launch.word(4), "<f2", n)[...] = w.astype(np.float16)


def half_copy(memory, launch):
    n, _ = _pair(launch, 2)
    memory.array(launch.word(1), "<f2", n)[...] = memory.array(launch.word(0), "<f4", n).astype(np.float16)


def embedding_backward(memory, launch):
    t, c = _pair(launch, 5)
    tokens = memory.array(launch.word(0), "<u4", t).astype(np.int64)
    dx = _rows(memory, launch.word(1), "<f4", t, c).astype(np.float64)
    dtoken = np.zeros((256, c))
    for i in range(t):
        dtoken[tokens[i]] += dx[i]
    _rows(memory, launch.word(2), "<f4", 256, c)[...] = dtoken
    _rows(memory, launch.word(3), "<f4", t, c)[...] = dx


def copy(memory, launch):
    n, _ = _pair(launch, 2)
    memory.array(launch.word(1), "<u4", n)[...] = memory.array(launch.word(0), "<u4", n).copy()


KERNELS = {
    "coppelius-gemm-nn": _gemm("nn"), "coppelius-gemm-nt": _gemm("nt"), "coppelius-gemm-tn": _gemm("tn"),
    "coppelius-embedding-forward": embedding_forward, "coppelius-embedding-backward": embedding_backward,
    "coppelius-layernorm-forward": layernorm_forward, "coppelius-layernorm-backward": layernorm_backward,
    "coppelius-layernorm-param-backward": layernorm_param_backward, "coppelius-bias-backward": bias_backward,
    "coppelius-softmax-forward": softmax_forward, "coppelius-attention-forward": attention_forward,
    "coppelius-softmax-backward": softmax_backward, "coppelius-attention-backward": attention_backward,
    "coppelius-attention-backward-kv": attention_backward_kv,
    "coppelius-gelu-forward": gelu_forward, "coppelius-gelu-backward": gelu_backward,
    "coppelius-cross-entropy": cross_entropy, "coppelius-loss-copy": loss_copy,
    "coppelius-nonfinite-check": nonfinite_check, "coppelius-adamw-half": adamw_half,
    "coppelius-half-copy": half_copy, "coppelius-copy": copy,
}


def _quiet(kernel):
    """The kernel with NumPy's floating-point warnings off: a GPU computes NaN and Inf without a
    word (a checkpoint full of Inf trains, every update skipped), and so does its reference, whose
    stderr is the host's (no RuntimeWarning lines from this file)."""
    @functools.wraps(kernel)
    def quiet(memory, launch):
        with np.errstate(all="ignore"):
            return kernel(memory, launch)
    return quiet


KERNELS = {name: _quiet(kernel) for name, kernel in KERNELS.items()}


# ---- running pieces on a flat memory (tests; the reference runner has its own Memory) ----

class FlatMemory(ViewedMemory):
    """Buffers by GPU address (the arena and the staging buffer), read and written as
    bobc.reference.host.Memory is."""

    def __init__(self, regions):
        self.regions = [(base, bytearray(size)) for base, size in regions]

    def view(self, address, size) -> memoryview:
        for base, data in self.regions:
            if base <= address and address + size <= base + len(data):
                return memoryview(data)[address - base:address - base + size]
        raise IndexError(f"no buffer holds [{address:#x}, {address + size:#x})")


def run(memory, launches, kernels=KERNELS, patch=None):
    """Run launches in order; `patch(launch) -> bytes` may rewrite a block (the host's AdamW scalars)."""
    for launch in launches:
        parameters = patch(launch) if patch else launch.parameters()
        kernels[launch.kernel](memory, Launched(parameters))

