"""Coppelius in PyTorch: the same math as examples/coppelius/coppelius_model/model.py,
written with autograd, for the GPU tests (PyTorch is on the GPU machine only).

The mixed precision is the kernels' (docs/coppelius.md): every matrix product reads
binary16 values and accumulates in binary32 (binary16-exact tensors multiplied in
binary32 with TF32 off), and the same values are rounded to binary16 where the kernels
store binary16 -- in the forward (`_half`), and for the gradients a product reads in the
backward (`_grad_half`), the bias gradients taken from those.  The master weights,
moments, AdamW and the static loss scale with its skip are as model.py's.
"""
from __future__ import annotations

import math

import numpy as np
import torch
import torch.nn.functional as F

GELU_C = math.sqrt(2.0 / math.pi)


class _Half(torch.autograd.Function):
    """Forward: round to binary16; backward: the gradient unchanged."""

    @staticmethod
    def forward(ctx, x):
        return x.half().to(x.dtype)

    @staticmethod
    def backward(ctx, g):
        return g


class _GradHalf(torch.autograd.Function):
    """Forward: unchanged; backward: the gradient rounded to binary16 (what the backward's
    products read)."""

    @staticmethod
    def forward(ctx, x):
        return x.clone()

    @staticmethod
    def backward(ctx, g):
        return g.half().to(g.dtype)


class _BothHalf(torch.autograd.Function):
    """Rounded to binary16 both ways (a product's binary16 output whose gradient is also a
    binary16 product output: o16 and do16)."""

    @staticmethod
    def forward(ctx, x):
        return x.half().to(x.dtype)

    @staticmethod
    def backward(ctx, g):
        return g.half().to(g.dtype)


half, grad_half, both_half = _Half.apply, _GradHalf.apply, _BothHalf.apply


def gelu(u):
    return 0.5 * u * (1.0 + torch.tanh(GELU_C * (u + 0.044715 * u * u * u)))


class TorchCoppelius:
    """One Coppelius (configuration and state) on a torch device.  dtype float64 sums every
    product and reduction in binary64 (the binary16 roundings stay): the NumPy reference's
    arithmetic, a second valid implementation to show how far two correct runs drift."""

    def __init__(self, config, P, M, V, device="cuda", step=0, skipped=0, dtype=torch.float32):
        torch.backends.cuda.matmul.allow_tf32 = False
        torch.backends.cudnn.allow_tf32 = False
        self.config, self.device, self.dtype = config, device, dtype
        self.P = torch.tensor(np.asarray(P, np.float32), device=device, dtype=dtype)
        self.M = torch.tensor(np.asarray(M, np.float32), device=device, dtype=dtype)
        self.V = torch.tensor(np.asarray(V, np.float32), device=device, dtype=dtype)
        self.H = self.P.half()
        self.step, self.skipped = step, skipped
        self.grad = None          # the last update's S x gradient (flat), before any corruption
        self.mask = torch.triu(torch.ones(config.context, config.context, dtype=torch.bool, device=device), 1)

    def _view(self, flat, name):
        t = self.config.tensor(name)
        return flat[t.offset:t.end].view(t.shape)

    def loss_and_gradient(self, tokens, targets):
        """The mean loss, the row losses and S x the gradient (flat binary32)."""
        c = self.config
        T, d, H, dh = c.context, c.width, c.heads, c.head_dimension
        eps = float(np.float32(c.hyper.layer_norm_epsilon))
        P = self.P.clone().requires_grad_(True)
        # the half copy's values with the master's gradient (H = half(P) always holds)
        p32 = lambda name: self._view(P, name)
        w16 = lambda name: half(self._view(P, name))
        tok = torch.as_tensor(np.asarray(tokens, np.int64), device=self.device)
        tgt = torch.as_tensor(np.asarray(targets, np.int64), device=self.device)

        def ln(x, n):
            return half(F.layer_norm(x, (d,), 1.0 + p32(n + ".g"), p32(n + ".b"), eps))

        x = p32("wte")[tok] + p32("wpe")[:T]
        for layer in range(c.layers):
            n = f"h{layer}."
            a16 = ln(x, n + "ln1")
            qkv16 = half(grad_half(a16 @ w16(n + "wqkv") + p32(n + "bqkv")))
            q, k, v = (qkv16[:, i * d:(i + 1) * d].reshape(T, H, dh).transpose(0, 1) for i in range(3))
            scores = grad_half(q @ k.transpose(1, 2)) * (1.0 / math.sqrt(dh))
            p = torch.softmax(scores.masked_fill(self.mask, float("-inf")), dim=-1)
            o16 = both_half(half(p) @ v).transpose(0, 1).reshape(T, d)
            h = x + grad_half(o16 @ w16(n + "wproj") + p32(n + "bproj"))
            b16 = ln(h, n + "ln2")
            u = b16 @ w16(n + "wfc") + p32(n + "bfc")
            u = grad_half(u)
            g16 = half(gelu(u))
            x = h + grad_half(g16 @ w16(n + "wfcproj") + p32(n + "bfcproj"))
        xf16 = ln(x, "lnf")
        logits = grad_half(xf16 @ w16("head"))
        losses = F.cross_entropy(logits, tgt, reduction="none")
        loss = losses.mean()
        (loss * float(c.hyper.loss_scale)).backward()
        return float(loss.detach()), losses.detach().cpu().numpy(), P.grad.detach()

    def adamw(self, grad) -> bool:
        """model.adamw on the device: False (nothing written but the count) on a non-finite gradient."""
        from coppelius_model.model import adamw_scalars, decay_factor
        c, h = self.config, self.config.hyper
        self.step += 1
        if not bool(torch.isfinite(grad).all()):
            self.skipped += 1
            return False
        s = adamw_scalars(c, self.step)
        b1, b2 = float(np.float32(h.beta1)), float(np.float32(h.beta2))
        ob1, ob2 = float(np.float32(1 - h.beta1)), float(np.float32(1 - h.beta2))
        for first, count, decayed in c.pieces():
            sl = slice(first, first + count)
            g = grad[sl]
            w = self.P[sl] * float(decay_factor(c, decayed))
            m = b1 * self.M[sl] + ob1 * g
            v = b2 * self.V[sl] + ob2 * (g * g)
            w = w - float(s.step_size) * m / (torch.sqrt(v) + float(s.epsilon))
            self.P[sl], self.M[sl], self.V[sl] = w, m, v
            self.H[sl] = w.half()
        return True

    def update(self, tokens, targets, corrupt=None):
        loss, losses, grad = self.loss_and_gradient(tokens, targets)
        self.grad = grad.clone()
        if corrupt is not None:
            grad[corrupt[0]] = corrupt[1]
        applied = self.adamw(grad)
        return loss, losses, applied

    def numpy_state(self):
        return (self.P.cpu().numpy(), self.M.cpu().numpy(), self.V.cpu().numpy(), self.H.cpu().numpy())
