"""The backward is the derivative of the forward: in binary64 (no rounding), every
gradient element checked here equals a central finite difference of the mean loss.

The tiny configuration (2 layers, width 32, 2 heads of 16, context 8) keeps every
code path of the large ones (several heads, the causal mask, both layer norms, the
GELU, the residuals, the embedding scatter with a repeated token) and is small
enough to difference: a sample of elements of every tensor, each with two forward
passes.
"""
from __future__ import annotations

import numpy as np
import pytest

from coppelius_model.config import TINY
from coppelius_model.model import BINARY64, backward, forward


def mean_loss(flat, tokens, targets):
    return float(np.mean(forward(TINY, flat, flat, tokens, targets, BINARY64, scale=1.0).losses))


@pytest.fixture(scope="module")
def case():
    rng = np.random.default_rng(16)
    # larger weights than a fresh model's, so every nonlinearity is exercised off its linear part
    flat = rng.normal(0.0, 0.3, TINY.parameter_count)
    tokens = np.array([3, 7, 3, 200, 7, 7, 65, 3])       # repeated tokens: the scatter adds
    targets = np.array([7, 3, 200, 7, 7, 65, 3, 11])
    fwd = forward(TINY, flat, flat, tokens, targets, BINARY64, scale=1.0)
    grad = backward(TINY, flat, fwd, BINARY64)
    return flat, tokens, targets, grad


@pytest.mark.parametrize("tensor", [t.name for t in TINY.tensors()])
def test_backward_matches_finite_differences(case, tensor):
    flat, tokens, targets, grad = case
    t = TINY.tensor(tensor)
    rng = np.random.default_rng(t.offset)
    indices = rng.choice(np.arange(t.offset, t.end), size=min(6, t.size), replace=False)
    if tensor == "wte":     # rows the context uses (the others' gradient is 0, checked below)
        indices = np.array([3 * 32 + 5, 7 * 32 + 1, 200 * 32 + 31, 65 * 32])
    h = 1e-6
    for i in indices:
        plus, minus = flat.copy(), flat.copy()
        plus[i] += h
        minus[i] -= h
        numeric = (mean_loss(plus, tokens, targets) - mean_loss(minus, tokens, targets)) / (2 * h)
        assert grad[i] == pytest.approx(numeric, rel=1e-5, abs=1e-9), (tensor, i - t.offset)


def test_unused_embedding_rows_have_zero_gradient(case):
    flat, tokens, targets, grad = case
    wte = grad[:256 * 32].reshape(256, 32)
    unused = np.setdiff1d(np.arange(256), tokens)
    assert np.all(wte[unused] == 0) and np.all(np.abs(wte[tokens]).sum(axis=1) > 0)


def test_the_loss_scale_scales_the_gradient_alone(case):
    """S x the gradient, exactly (S is a power of two), and the same losses."""
    flat, tokens, targets, grad = case
    fwd = forward(TINY, flat, flat, tokens, targets, BINARY64, scale=1024.0)
    assert np.array_equal(backward(TINY, flat, fwd, BINARY64), 1024.0 * grad)
