"""Coppelius's launch graph: every submission's launches, each with its kernel, grid,
block and parameter words (docs/coppelius.md, "The submissions and the launch graph").

The parameter blocks are the kernels' own contracts (/work/notes/s3/CGEMM.md and
CKERN.md at the time of writing; the kernels' ``//@ param`` lines): 8-byte words
from the parameter base, pointers whole, two 32-bit scalars to a word (the first
in the low half).  Coppelius.Build.Graph builds the same launches in the plan
language; tests/coppelius/test_plan_agrees.py holds the two together.

    python -m coppelius_model.graph small     # the update's launches, one a line (or large, 1x256x128...)
"""
from __future__ import annotations

import dataclasses
import struct
import sys
from dataclasses import dataclass, field

from .config import CoppeliusConfig, named
from .layout import (ARENA_BASE, STAGING_BASE, STAGING_INPUTS, STAGING_LOSS_BLOCK, STAGING_LOSS_WINDOW,
                     STAGING_PREDICTIONS, STAGING_RECORD, STAGING_REPORT_END, STAGING_TARGETS, SUMMARY_BYTES,
                     arena, checkpoint_payload_bytes, chunks)

GEMM_BLOCK = 128
ROW_BLOCK = 256
LOSS_COPY_BLOCK = 32
# GEMM flags (CGEMM.md; compiler/bobc/sass/generate/gemm.py): add R, add bias, write the binary16
# copy Dh, no binary32 D, split K, column sums of B into E (a weight-gradient product's bias gradient),
# Dh = half(gelu(v)) (the MLP's activation), v *= gelu'(U) (its input gradient, U the saved u)
ADD_R, ADD_BIAS, WRITE_HALF, NO_D, SPLIT_K, COLUMN_SUMS, GELU, GELU_GRAD = 1, 2, 4, 8, 16, 32, 64, 128
# partials only (with split K): the blocks store their partials in W and exit; the next launch, a
# layer norm, adds them and runs the product's epilogue (Builder.norm_partials)
PARTIALS = 512
# split K (compiler/bobc/sass/generate/gemm.py split_count; tests/coppelius/test_kernels_gemm.py
# holds the two rules together): products of fewer tiles than this, at most SPLIT_MAX splits of
# at least SPLIT_MIN_SLICES 32-k slices
SPLIT_FEW_TILES, SPLIT_MIN_SLICES, SPLIT_MAX = 66, 12, 4


def split_count(m: int, n: int, k: int, batches: int = 1) -> int:
    """How many blocks per output tile split a product's K (1: none)."""
    slices = k // 32
    if batches != 1 or (m // 64) * (n // 64) >= SPLIT_FEW_TILES:
        return 1
    return max(s for s in range(1, SPLIT_MAX + 1) if slices % s == 0 and (s == 1 or slices // s >= SPLIT_MIN_SLICES))


def f32(x: float) -> int:
    return struct.unpack("<I", struct.pack("<f", x))[0]


def pair(low: int, high: int = 0) -> int:
    return (low & 0xFFFFFFFF) | ((high & 0xFFFFFFFF) << 32)


def gemm_words(A, B, M, N, K, lda, ldb, D=0, Dh=0, R=0, bias=0, flags=0, ldd=0, ldh=0, batches=1, sA=0, sB=0,
               sD=0, sH=0, alpha=1.0, E=0, U=0, W=0, tickets=0) -> tuple[int, ...]:
    """A coppelius-gemm launch's seventeen parameter words (CGEMM.md; the kernels' `//@ param`
    lines): a pointer the flags leave unread is D's (or Dh's), so every word is an arena address."""
    return (A, B, D or Dh, Dh or D, R or D or Dh, bias or D or Dh, pair(M, N), pair(K, flags), pair(lda, ldb),
            pair(ldd or ldh, ldh or ldd), pair(sA, sB), pair(sD or sH, sH or sD), pair(f32(alpha), batches),
            W, tickets, E or D or Dh, U or D or Dh)


@dataclass(frozen=True)
class Launch:
    kernel: str                       # the region's identity: coppelius-<name>
    grid: tuple[int, int, int]
    block: int
    words: tuple[int, ...]            # parameter words 0, 1, ... (64-bit each)
    what: str = ""

    def parameters(self) -> bytes:
        return b"".join(struct.pack("<Q", w) for w in self.words)


@dataclass
class Piece:
    """One submission: its name and its launches in order."""

    name: str
    launches: list[Launch] = field(default_factory=list)


def _rows(n: int) -> int:
    return -(-n // 8)


def _elements(n: int) -> int:
    return -(-n // 1024)


class Builder:
    """The launches of Coppelius's pieces for one configuration."""

    def __init__(self, config: CoppeliusConfig, arena_base: int = ARENA_BASE, staging_base: int = STAGING_BASE):
        self.c = config
        self.r = arena(config, arena_base)
        self.staging = staging_base
        T, d = config.context, config.width
        self.T, self.d, self.H, self.dh, self.f, self.V = T, d, config.heads, config.head_dimension, config.hidden, config.vocabulary
        self.counters = self.r["counters"].address

    def at(self, name: str, offset: int = 0) -> int:
        return self.r[name].address + offset

    def param(self, plane: str, tensor: str, bytes_per: int) -> int:
        return self.at(plane, bytes_per * self.c.tensor(tensor).offset)

    def P(self, t): return self.param("parameters", t, 4)
    def Hf(self, t): return self.param("half-parameters", t, 2)
    def G(self, t): return self.param("gradients", t, 4)

    # ---- the kernels' parameter blocks ----
    def gemm(self, form, what, A, B, M, N, K, lda, ldb, D=0, Dh=0, R=0, bias=0, flags=0, ldd=0, ldh=0,
             batches=1, sA=0, sB=0, sD=0, sH=0, alpha=1.0, E=0, U=0, to_norm=False):
        """One product; `to_norm`: its only next reader is a layer norm that, when the product
        runs split, adds the partials itself (flag 512: no epilogue here, so neither R nor the bias
        is read; Builder.norm_partials gives the norm the same words)."""
        splits = split_count(M, N, K, batches)
        if flags & COLUMN_SUMS and (splits > 1 or batches != 1 or form == "nt"):
            raise ValueError(f"{what}: column sums of B (flag {COLUMN_SUMS}) need an unsplit one-batch nn or tn "
                             f"product, not {form} in {splits} splits of {batches} batches")
        if splits > 1:       # block z of a tile sums its K/S; the tile's last adds the partials in W
            K, flags, batches = K // splits, flags | SPLIT_K, splits
            sA = K if form != "tn" else K * lda
            sB = K if form == "nt" else K * ldb
            if to_norm:
                flags = SPLIT_K | PARTIALS
        words = gemm_words(A, B, M, N, K, lda, ldb, D, Dh, R, bias, flags, ldd, ldh, batches, sA, sB, sD, sH, alpha,
                           E, U, self.at("gemm-partials"), self.at("gemm-tickets"))
        return Launch(f"coppelius-gemm-{form}", (N // 64, M // 64, batches), GEMM_BLOCK, words, what)

    def rows(self, kernel, what, count, *words):
        return Launch(f"coppelius-{kernel}", (_rows(count), 1, 1), ROW_BLOCK, tuple(words), what)

    def elementwise(self, kernel, what, count, *words):
        return Launch(f"coppelius-{kernel}", (_elements(count), 1, 1), ROW_BLOCK, tuple(words), what)

    def copy(self, what, src, dst, nbytes):
        assert nbytes % 16 == 0, (what, nbytes)
        return self.elementwise("copy", what, nbytes // 4, src, dst, pair(nbytes // 4))

    def columns(self, kernel, what, columns, *words, batches=1):
        return Launch(f"coppelius-{kernel}", (-(-columns // 64), batches, 1), ROW_BLOCK, tuple(words), what)

    def norm_partials(self, K, addend=0, bias=0):
        """The words a layer norm reads a T x d product's partials by (its K; the product's R and
        bias, forward): (W, addend, bias, (S, alpha)), or S = 0 (x or dy read plainly, the pointers
        the norm's own first) when the product does not run split.  The splits are the product's
        (gemm above, to_norm: flag 512); alpha is 1 for every such product."""
        splits = split_count(self.T, self.d, K)
        if splits == 1:
            return None
        return self.at("gemm-partials"), addend, bias, pair(splits, f32(1.0))

    def layer_norm(self, what, x, gain, bias, y16, mean, rstd, partials=None):
        T, d = self.T, self.d
        w, addend, product_bias, split = partials or (x, x, x, pair(0))
        return self.rows("layernorm-forward", what, T, x, gain, bias, y16, mean, rstd, pair(T, d),
                         pair(f32(self.c.hyper.layer_norm_epsilon), f32(1.0 / d)), w, addend, product_bias, split)

    def attention_forward(self, what, qkv16, p16, p, o16):
        """One launch for a layer's attention (coppelius_model/attention.py: the three launches
        it stands for, scores = q k^T, the causal softmax and o16 = p16 v, bit for bit)."""
        from .attention import BLOCKS, KERNEL, words
        T, H = self.T, self.H
        return Launch(KERNEL, (T // 32, H, 1), BLOCKS[KERNEL], words(qkv16, p16, p, o16, T, H, self.dh ** -0.5), what)

    # ---- the forward ----
    def forward(self) -> list[Launch]:
        T, d, H, dh, f, V = self.T, self.d, self.H, self.dh, self.f, self.V
        tokens, targets = self.staging + STAGING_INPUTS, self.staging + STAGING_TARGETS
        out = [self.rows("embedding-forward", "x0 = wte[tokens] + wpe", T, tokens, self.P("wte"), self.P("wpe"),
                         self.at("h0.x"), self.at("x0-half"), pair(T, d))]
        for layer in range(self.c.layers):
            n = f"h{layer}."
            x = self.at(n + "x")
            x_next = self.at(f"h{layer + 1}.x") if layer + 1 < self.c.layers else self.at("xL")
            # x = the layer below's x' (its product's partials), or layer 0's embedding
            below = (self.norm_partials(f, self.at(f"h{layer - 1}.h"), self.P(f"h{layer - 1}.bfcproj"))
                     if layer else None)
            out += [
                self.layer_norm(n + "ln1", x, self.P(n + "ln1.g"), self.P(n + "ln1.b"), self.at(n + "a16"),
                                self.at(n + "ln1-mean"), self.at(n + "ln1-rstd"), below),
                self.gemm("nn", n + "qkv16 = a16 Wqkv + bqkv", self.at(n + "a16"), self.Hf(n + "wqkv"), T, 3 * d, d,
                          d, 3 * d, Dh=self.at(n + "qkv16"), bias=self.P(n + "bqkv"), flags=ADD_BIAS | WRITE_HALF | NO_D,
                          ldh=3 * d),
                self.attention_forward(n + "p = causal softmax(q k^T / sqrt(dh)), o16 = p16 v (per head)",
                                       self.at(n + "qkv16"), self.at(n + "p16"), self.at(n + "p"), self.at(n + "o16")),
                self.gemm("nn", n + "h = o16 Wproj + bproj + x", self.at(n + "o16"), self.Hf(n + "wproj"), T, d, d, d, d,
                          D=self.at(n + "h"), R=x, bias=self.P(n + "bproj"), flags=ADD_R | ADD_BIAS, ldd=d, to_norm=True),
                self.layer_norm(n + "ln2", self.at(n + "h"), self.P(n + "ln2.g"), self.P(n + "ln2.b"), self.at(n + "b16"),
                                self.at(n + "ln2-mean"), self.at(n + "ln2-rstd"),
                                self.norm_partials(d, x, self.P(n + "bproj"))),
                self.gemm("nn", n + "u = b16 Wfc + bfc, g16 = gelu(u)", self.at(n + "b16"), self.Hf(n + "wfc"), T, f,
                          d, d, f, D=self.at(n + "u"), Dh=self.at(n + "g16"), bias=self.P(n + "bfc"),
                          flags=ADD_BIAS | WRITE_HALF | GELU, ldd=f, ldh=f),
                self.gemm("nn", n + "x' = g16 Wfcproj + bfcproj + h", self.at(n + "g16"), self.Hf(n + "wfcproj"), T, d, f,
                          f, d, D=x_next, R=self.at(n + "h"), bias=self.P(n + "bfcproj"), flags=ADD_R | ADD_BIAS, ldd=d,
                          to_norm=True),
            ]
        last = f"h{self.c.layers - 1}."
        out += [
            self.layer_norm("lnf", self.at("xL"), self.P("lnf.g"), self.P("lnf.b"), self.at("xf16"),
                            self.at("lnf-mean"), self.at("lnf-rstd"),
                            self.norm_partials(f, self.at(last + "h"), self.P(last + "bfcproj"))),
            self.gemm("nn", "logits = xf16 Whead", self.at("xf16"), self.Hf("head"), T, V, d, d, V,
                      D=self.at("logits"), ldd=V),
            self.rows("cross-entropy", "row losses; dlogits16 = S (softmax - onehot) / T", T, self.at("logits"), targets,
                      self.at("dlogits16"), self.at("losses"),
                      pair(T, f32(self.c.hyper.loss_scale / T))),
        ]
        return out

    # ---- the backward ----
    def ln_backward(self, what, x, gain, mean, rstd, dy, add, dres16, partials=None):
        """dres (+)= the norm's input gradient, in place; its binary16 copy to `dres16` (the
        norm's own resident: the weight-gradient products that read it run beside the chain).
        `partials` (norm_partials): dy is the product's, added from its partials and written here."""
        T, d = self.T, self.d
        w, _, _, split = partials or (dy, 0, 0, pair(0))
        return self.rows("layernorm-backward", what, T, x, gain, mean, rstd, dy, self.at("dres"), self.at("dres"),
                         dres16, pair(T, d), pair(f32(1.0 / d), add), w, split)

    def ln_param_backward(self, what, x, mean, rstd, dy, gain_grad, bias_grad, batches=1, stride=0, grad_stride=0):
        """G[gain], G[bias] of `batches` layer norms in one launch: batch z's x, mean, rstd and dy
        `stride` bytes on from the first's (a layer's block of residents), its gradients
        `grad_stride` bytes on (a layer's gains and biases); strides are words 7..9 in elements."""
        T, d = self.T, self.d
        s, g = stride // 4, grad_stride // 4
        assert stride % 4 == 0 and grad_stride % 4 == 0 and max(s, g) < 1 << 32, (what, stride, grad_stride)
        return self.columns("layernorm-param-backward", what, d, x, mean, rstd, dy, gain_grad, bias_grad, pair(T, d),
                            pair(s, s), pair(s, s), pair(g, g), pair(batches), batches=batches)

    def layer_stride(self, *names: str) -> int:
        """Bytes from layer l's `name` (an arena resident h{l}.<name> or a parameter tensor's gradient)
        to layer l + 1's: one stride for every l and every name given, else ValueError (a batched
        launch moves each pointer by it).  With one layer the launch has one batch and moves no
        pointer; its words are then the stride a second layer would be at (the plan's, which
        computes the layer block whatever the count)."""
        if self.c.layers == 1:
            return Builder(dataclasses.replace(self.c, layers=2)).layer_stride(*names)
        def address(layer, name):
            key = f"h{layer}.{name}"
            return self.at(key) if key in self.r else self.G(key)
        steps = {address(l + 1, name) - address(l, name) for name in names for l in range(self.c.layers - 1)}
        if len(steps) > 1:
            raise ValueError(f"h*.{{{', '.join(names)}}} are not at one stride per layer: steps {sorted(steps)}")
        return steps.pop() if steps else 0

    def weight_gradient(self, what, A, dy16, M, N, weight, bias):
        """G[weight] = A^T dy16 (tn: T rows of A and dy16) and, by the same launch's column sums
        (flag 32, the order of coppelius-bias-backward), G[bias] = the column sums of dy16."""
        return self.gemm("tn", what, A, dy16, M, N, self.T, M, N, D=weight, ldd=N, flags=COLUMN_SUMS, E=bias)

    def attention_backward_kv(self, what, qkv16, p16, dqkv16):
        """One launch of coppelius-attention-backward-kv for every head: dv = p16^T do16 and
        dk = ds16^T q into dqkv's and dqkv16's v and k columns, bit for bit the two tn products it
        replaced (coppelius_model/attention.py kv_parts; tests/coppelius/test_kernels_attention_sim.py)."""
        from .attention import BLOCKS, KV, backward_words
        T, H = self.T, self.H
        return Launch(KV, (T // 32, H, 1), BLOCKS[KV], backward_words(
            qkv16, self.at("do16"), p16, self.at("ds16"), self.at("dqkv"), dqkv16, T, H, self.dh ** -0.5), what)

    def attention_backward(self, what, qkv16, p, dqkv16):
        """One launch of coppelius-attention-backward for every head: dP = do16 v^T, ds16 (the
        softmax's backward) and dq = ds16 k into dqkv's and dqkv16's q columns, bit for bit the
        gemm nt, softmax-backward and gemm nn launches it replaces (tests/coppelius/
        test_kernels_attention_sim.py); dP stays in the kernel's shared memory."""
        from .attention import BACKWARD, BLOCKS, backward_words
        T, H = self.T, self.H
        return Launch(BACKWARD, (T // 32, H, 1), BLOCKS[BACKWARD], backward_words(
            qkv16, self.at("do16"), p, self.at("ds16"), self.at("dqkv"), dqkv16, T, H, self.dh ** -0.5), what)

    def backward(self) -> list[Launch]:
        T, d, H, dh, f, V = self.T, self.d, self.H, self.dh, self.f, self.V
        out = [
            self.gemm("tn", "G[head] = xf16^T dlogits16", self.at("xf16"), self.at("dlogits16"), d, V, T, d, V,
                      D=self.G("head"), ldd=V),
            self.gemm("nt", "dxf = dlogits16 Whead^T", self.at("dlogits16"), self.Hf("head"), T, d, V, V, V,
                      D=self.at("dtmp"), ldd=d),
        ]
        out += [self.ln_backward("lnf backward", self.at("xL"), self.P("lnf.g"), self.at("lnf-mean"), self.at("lnf-rstd"),
                                 self.at("dtmp"), 0, self.at("lnf-dres16")),
                self.ln_param_backward("lnf backward gain, bias", self.at("xL"), self.at("lnf-mean"), self.at("lnf-rstd"),
                                       self.at("dtmp"), self.G("lnf.g"), self.G("lnf.b"))]
        for layer in reversed(range(self.c.layers)):
            n = f"h{layer}."
            qkv16 = self.at(n + "qkv16")
            # the binary16 gradients this layer's products read: each written once per update, by
            # the norm above (the layer above's ln1, or lnf) and this layer's launches
            above = self.at(f"h{layer + 1}.dres16-ln1") if layer + 1 < self.c.layers else self.at("lnf-dres16")
            du16, dres16, dqkv16 = self.at(n + "du16"), self.at(n + "dres16-ln2"), self.at(n + "dqkv16")
            out += [
                self.weight_gradient(n + "G[wfcproj] = g16^T dres16, G[bfcproj]", self.at(n + "g16"),
                                     above, f, d, self.G(n + "wfcproj"), self.G(n + "bfcproj")),
                self.gemm("nt", n + "du16 = (dres16 Wfcproj^T) gelu'(u)", above, self.Hf(n + "wfcproj"),
                          T, f, d, d, d, Dh=du16, flags=WRITE_HALF | NO_D | GELU_GRAD, ldh=f,
                          U=self.at(n + "u")),
                self.weight_gradient(n + "G[wfc] = b16^T du16, G[bfc]", self.at(n + "b16"), du16, d, f,
                                     self.G(n + "wfc"), self.G(n + "bfc")),
                self.gemm("nt", n + "dln2 = du16 Wfc^T", du16, self.Hf(n + "wfc"), T, d, f, f, f,
                          D=self.at(n + "ln2-dy"), ldd=d, to_norm=True),
                self.ln_backward(n + "ln2 backward", self.at(n + "h"), self.P(n + "ln2.g"), self.at(n + "ln2-mean"),
                                 self.at(n + "ln2-rstd"), self.at(n + "ln2-dy"), 1, dres16, self.norm_partials(f)),
                self.weight_gradient(n + "G[wproj] = o16^T dres16, G[bproj]", self.at(n + "o16"), dres16,
                                     d, d, self.G(n + "wproj"), self.G(n + "bproj")),
                self.gemm("nt", n + "do16 = dres16 Wproj^T", dres16, self.Hf(n + "wproj"), T, d, d, d, d,
                          Dh=self.at("do16"), flags=WRITE_HALF | NO_D, ldh=d),
                self.attention_backward(n + "dp = do16 v^T, ds16 = p (dp - rowsum(dp p)) / sqrt(dh), dq = ds16 k "
                                        "(per head)", qkv16, self.at(n + "p"), dqkv16),
                self.attention_backward_kv(n + "dv = p16^T do16, dk = ds16^T q (per head)", qkv16, self.at(n + "p16"),
                                           dqkv16),
                self.weight_gradient(n + "G[wqkv] = a16^T dqkv16, G[bqkv]", self.at(n + "a16"), dqkv16,
                                     d, 3 * d, self.G(n + "wqkv"), self.G(n + "bqkv")),
                self.gemm("nt", n + "dln1 = dqkv16 Wqkv^T", dqkv16, self.Hf(n + "wqkv"), T, d, 3 * d, 3 * d,
                          3 * d, D=self.at(n + "ln1-dy"), ldd=d, to_norm=True),
                self.ln_backward(n + "ln1 backward", self.at(n + "x"), self.P(n + "ln1.g"), self.at(n + "ln1-mean"),
                                 self.at(n + "ln1-rstd"), self.at(n + "ln1-dy"), 1, self.at(n + "dres16-ln1"),
                                 self.norm_partials(3 * d)),
            ]
        # every layer's ln2, then ln1, gain and bias gradients: one launch each, a batch per layer
        # (nothing in the backward reads them before AdamW)
        L = self.c.layers
        for norm, x in (("ln2", "h"), ("ln1", "x")):
            block = self.layer_stride(x, f"{norm}-mean", f"{norm}-rstd", f"{norm}-dy")
            grads = self.layer_stride(f"{norm}.g", f"{norm}.b")
            out.append(self.ln_param_backward(f"h*.{norm} gain, bias ({L} layers)", self.at("h0." + x),
                                              self.at(f"h0.{norm}-mean"), self.at(f"h0.{norm}-rstd"),
                                              self.at(f"h0.{norm}-dy"), self.G(f"h0.{norm}.g"), self.G(f"h0.{norm}.b"),
                                              batches=L, stride=block, grad_stride=grads))
        out.append(Launch("coppelius-embedding-backward", (256 + T, 1, 1), ROW_BLOCK,
                          (self.staging + STAGING_INPUTS, self.at("dres"), self.G("wte"), self.G("wpe"), 0,
                           pair(T, d), pair(0)), "G[wte] = scatter(dres), G[wpe] = dres"))
        return out

    def adamw(self) -> list[Launch]:
        """The two AdamW launches (the decay group, then gains and biases); the host writes each
        step's alpha_t and epsilon_t at bytes 48 and 52 and t (u32, unread by the kernel) at 80, the
        gradient multiplier at 84; the values here are step 1's."""
        from .model import adamw_scalars, decay_factor
        h, s = self.c.hyper, adamw_scalars(self.c, 1)
        out = []
        for index, (first, count, decayed) in enumerate(self.c.pieces()):
            words = (self.at("parameters", 4 * first), self.at("gradients", 4 * first),
                     self.at("first-moments", 4 * first), self.at("second-moments", 4 * first),
                     self.at("half-parameters", 2 * first), self.counters,
                     pair(f32(s.step_size), f32(s.epsilon)),
                     pair(f32(decay_factor(self.c, decayed)), f32(h.beta1)),
                     pair(f32(1 - h.beta1), f32(h.beta2)), pair(f32(1 - h.beta2), count), pair(1, f32(1.0)))
            out.append(Launch("coppelius-adamw-half", (-(-count // 1024), 1, 1), ROW_BLOCK, words,
                              f"AdamW piece {index} ({'decayed' if decayed else 'no decay'}, {count} elements)"))
        return out

    def loss_copy(self, dst, update: int) -> Launch:
        return Launch("coppelius-loss-copy", (1, 1, 1), LOSS_COPY_BLOCK,
                      (self.at("losses"), dst, self.counters, self.counters + 8, pair(self.T, f32(1.0 / self.T)),
                       pair(update)), "summary: mean loss, skipped, updates, skipped total")

    # ---- the pieces ----
    def pieces(self) -> list[Piece]:
        T, V = self.T, self.V
        staging = self.staging
        report = self.at("report")
        fence = Piece("fence", [self.copy("fence: counters -> fence", self.counters, self.at("fence"), 16)])
        payload = self.at("parameters")
        out = [Piece("initialize", fence.launches), fence]
        parts = chunks(self.c)
        for index, (offset, nbytes) in enumerate(parts):
            out.append(Piece(f"scatter-{index}", [self.copy(f"chunk {index} -> arena", staging, payload + offset, nbytes)]))
            if index + 1 < len(parts):
                out.append(Piece("fence", fence.launches))
        n = self.c.parameter_count
        last_row = self.at("logits", 4 * (T - 1) * V)
        forward = [self.elementwise("half-copy", "H = half(P)", n, self.at("parameters"), self.at("half-parameters"),
                                    pair(n))] + self.forward()
        forward += [self.copy("predictions", last_row, staging + STAGING_PREDICTIONS, 4 * V),
                    self.loss_copy(staging + STAGING_RECORD + 16, 0),
                    self.copy("marker -> report", staging + STAGING_RECORD, report, 16)]
        out.append(Piece("forward", forward))
        update = self.forward() + self.backward() + [
            self.elementwise("nonfinite-check", "flag = any gradient not finite", n, self.at("gradients"), self.counters,
                             pair(n))] + self.adamw() + [
            self.loss_copy(staging + STAGING_LOSS_WINDOW, 1),
            self.copy("row losses -> loss record", self.at("losses"), staging + STAGING_LOSS_WINDOW + SUMMARY_BYTES, 4 * T)]
        out.append(Piece("update", update))
        out.append(Piece("final", self.forward() + [
            self.copy("predictions -> report", last_row, report + STAGING_PREDICTIONS - STAGING_RECORD, 4 * V),
            self.loss_copy(report + STAGING_LOSS_BLOCK - STAGING_RECORD, 0),
            self.copy("row losses -> report", self.at("losses"),
                      report + STAGING_LOSS_BLOCK - STAGING_RECORD + SUMMARY_BYTES, 4 * T),
            self.copy("summary -> report record", report + STAGING_LOSS_BLOCK - STAGING_RECORD, report + 16, 16)]))
        for index, (offset, nbytes) in enumerate(parts):
            out.append(Piece(f"gather-{index}", [self.copy(f"arena -> chunk {index}", payload + offset, staging, nbytes)]))
        out.append(Piece("restore", [self.copy("report -> staging", report, staging + STAGING_RECORD,
                                               STAGING_REPORT_END - STAGING_RECORD)]))
        return out


def pieces(config: CoppeliusConfig) -> list[Piece]:
    return Builder(config).pieces()


def update_launches(config: CoppeliusConfig) -> list[Launch]:
    return next(p for p in pieces(config) if p.name == "update").launches


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if len(argv) > 1 or (argv and argv[0] in ("-h", "--help")):
        print("usage: python -m coppelius_model.graph [CONFIG]  (small, large or LAYERSxWIDTHxCONTEXT)",
              file=sys.stderr if len(argv) > 1 else sys.stdout)
        return 2 if len(argv) > 1 else 0
    try:
        config = named(argv[0] if argv else "small")
    except ValueError as error:
        print(f"python -m coppelius_model.graph: error: {error}", file=sys.stderr)
        return 2
    print(f"# {config.name}: {config.parameter_count} parameters, checkpoint payload "
          f"{checkpoint_payload_bytes(config)} bytes in {len(chunks(config))} chunks")
    for index, piece in enumerate(pieces(config)):
        print(f"piece {index}: {piece.name} ({len(piece.launches)} launch{'' if len(piece.launches) == 1 else 'es'})")
        if piece.name == "update":
            for k, launch in enumerate(piece.launches):
                print(f"  {k:3d} {launch.kernel:34s} grid {launch.grid} x {launch.block}  {launch.what}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
