"""Coppelius's whole update on the GPU: our kernels against PyTorch (docs/coppelius.md,
"Numeric tolerances").

Our kernels (examples/coppelius/Realization/Nvidia/SM86/*.sass, assembled by bobc) run
the launch graph's forward and update submissions through CuPy with graph.py's
parameter words (coppelius_model.device.Runner plays the host: it stages each context
and writes each step's AdamW scalars).  The oracle is the PyTorch model of the same
math (tests/gpu/coppelius_torch.py: autograd, cuBLAS on binary16-exact values with
TF32 off), and at the small configuration the NumPy reference (coppelius_model.model)
too.  Fed the same weights and context, one update agrees: the mean loss within 1e-3
relative, the master weights within 1e-3 of the update's size alpha_1 for 99.5% of
the elements and within 2 alpha_1 everywhere (why not all: the doc), at the small and
the large configuration.  Over 200 updates on the shipped English text both learn
alike (the curves side by side: $COPPELIUS_CURVES, else the test's temporary folder).
An injected infinity skips the update and counts it with nothing written, in our
kernels as in PyTorch (GradScaler's rule), and the next update trains again.

On the device machine:  PYTHONPATH=compiler python3 -m pytest -m gpu tests/gpu/test_coppelius_update.py -v -s
"""
from __future__ import annotations

import os
import sys
import time
from pathlib import Path

import numpy as np
import pytest

pytestmark = pytest.mark.gpu

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "examples" / "coppelius"))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from coppelius_model import model  # noqa: E402
from coppelius_model.config import LARGE, SMALL  # noqa: E402
from coppelius_model.plot import curves_png  # noqa: E402

TEXT = REPO / "tests" / "data" / "coppelius" / "tinyshakespeare-64k.txt"
STEPS = 200


@pytest.fixture(scope="module")
def torch_model():
    pytest.importorskip("torch")
    import torch
    if not torch.cuda.is_available():
        pytest.skip("needs an NVIDIA GPU (/dev/nvidiactl absent); run tests/gpu/run.sh on a GPU machine")
    from coppelius_torch import TorchCoppelius
    return TorchCoppelius


@pytest.fixture(scope="module")
def backend(tmp_path_factory):
    pytest.importorskip("cupy")
    from coppelius_model import device
    return device.CupyBackend(tmp_path_factory.mktemp("coppelius-cubins"))


def runner_for(config, backend, state):
    from coppelius_model import device
    runner = device.Runner(config, backend)
    runner.load(state)
    return runner


def agree(config, label, loss, losses, state, reference_loss, reference_losses, reference_state):
    """The whole-update tolerances, with the numbers printed for the log."""
    alpha = float(model.adamw_scalars(config, 1).step_size)
    moved = np.abs(state.P.astype(np.float64) - reference_state.P)
    half = np.abs(state.H.astype(np.float64) - reference_state.H.astype(np.float64))
    row = np.abs(losses - reference_losses) / np.abs(reference_losses)
    print(f"\n  {config.name} {label}: loss {loss:.6f} vs {reference_loss:.6f} "
          f"(rel {abs(loss - reference_loss) / reference_loss:.2e}); row losses max rel {row.max():.2e}; "
          f"|dP|/alpha q99.5 {np.quantile(moved, 0.995) / alpha:.2e}, max {moved.max() / alpha:.3f}, "
          f"> 1e-3 alpha on {np.mean(moved > 1e-3 * alpha):.4%}; |dM| max {np.abs(state.M - reference_state.M).max():.3e}")
    assert abs(loss - reference_loss) <= 1e-3 * abs(reference_loss)
    assert np.quantile(row, 0.99) <= 1e-3
    assert np.quantile(moved, 0.995) <= 1e-3 * alpha
    assert moved.max() <= 2 * alpha * 1.001
    assert np.quantile(half, 0.995) <= 1e-3 * alpha + 2 ** -11 * 0.01


@pytest.mark.parametrize("config", [SMALL, LARGE], ids=["small", "large"])
def test_one_update_of_our_kernels_matches_pytorch(torch_model, backend, config):
    data = TEXT.read_bytes()
    start = model.fresh_state(config, seed=19)
    inputs, targets = model.context_at(data, 0, config.context)
    began = time.perf_counter()
    runner = runner_for(config, backend, start)
    ours = runner.update(inputs, targets)
    state = runner.state()
    print(f"\n  {config.name}: {len(runner.update_launches)} launches, first update (with assembly) "
          f"{time.perf_counter() - began:.2f} s")
    assert (ours.skipped_now, ours.updates, ours.skipped) == (0, 1, 0)
    torch_state = torch_model(config, start.P, start.M, start.V)
    loss, losses, applied = torch_state.update(inputs, targets)
    assert applied
    P, M, V, H = torch_state.numpy_state()
    agree(config, "ours vs PyTorch", ours.loss, ours.losses, state, loss, losses,
          model.State(P, M, V, H))
    if config is SMALL:           # the NumPy reference is minutes at the large configuration
        reference = start.copy()
        result = model.update(config, reference, inputs, targets)
        agree(config, "ours vs NumPy", ours.loss, ours.losses, state, result.loss, result.losses, reference)
        agree(config, "PyTorch vs NumPy", loss, losses, model.State(P, M, V, H), result.loss, result.losses,
              reference)


def test_two_hundred_updates_learn_like_pytorch(torch_model, backend, tmp_path):
    config, data = SMALL, TEXT.read_bytes()
    start = model.fresh_state(config, seed=17)
    runner = runner_for(config, backend, start)
    torch_state = torch_model(config, start.P, start.M, start.V)
    ours, theirs = [], []
    began = time.perf_counter()
    for step in range(STEPS):
        inputs, targets = model.context_at(data, step * config.context, config.context)
        summary = runner.update(inputs, targets)
        assert summary.skipped_now == 0 and summary.updates == step + 1
        ours.append(summary.loss)
        theirs.append(torch_state.update(inputs, targets)[0])
    print(f"\n  {STEPS} updates each in {time.perf_counter() - began:.1f} s; first 10 mean "
          f"{np.mean(ours[:10]):.4f} / {np.mean(theirs[:10]):.4f}, last 20 mean "
          f"{np.mean(ours[-20:]):.4f} / {np.mean(theirs[-20:]):.4f} (ours / PyTorch)")
    out = Path(os.environ.get("COPPELIUS_CURVES", tmp_path / "coppelius-curves.png"))
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_bytes(curves_png([ours, theirs]))
    out.with_suffix(".csv").write_text("step,ours,pytorch\n" + "".join(
        f"{k + 1},{a:.6f},{b:.6f}\n" for k, (a, b) in enumerate(zip(ours, theirs))), encoding="utf-8")
    first, last = np.mean(ours[:10]), np.mean(ours[-20:])
    assert first - last > 1.0, (first, last)            # it learns: from ~5.5 nats toward the text's bytes
    assert abs(np.mean(theirs[-20:]) - last) <= 0.02 * last
    assert abs(theirs[0] - ours[0]) <= 1e-3 * ours[0]
    gaps = np.abs(np.array(ours) - np.array(theirs)) / np.array(theirs)
    assert np.median(gaps) <= 0.01, np.median(gaps)


def test_an_injected_infinity_skips_the_update_in_our_kernels_and_pytorch(torch_model, backend):
    config, data = SMALL, TEXT.read_bytes()
    start = model.fresh_state(config, seed=18)
    runner = runner_for(config, backend, start)
    torch_state = torch_model(config, start.P, start.M, start.V)
    inputs, targets = model.context_at(data, 0, config.context)
    index = config.tensor("h2.wfc").offset + 11
    before = runner.state()
    summary = runner.update(inputs, targets, corrupt=(index, float("inf")))
    after = runner.state()
    assert (summary.skipped_now, summary.updates, summary.skipped) == (1, 1, 1)
    for name in "PMVH":
        assert np.array_equal(getattr(before, name), getattr(after, name)), name
    assert after.skipped == 1
    _, _, applied = torch_state.update(inputs, targets, corrupt=(index, float("inf")))
    assert not applied and torch_state.skipped == 1 and torch_state.step == 1
    # the next update trains again, in both, alike (step 2's scalars in both)
    inputs, targets = model.context_at(data, config.context, config.context)
    summary = runner.update(inputs, targets)
    loss, losses, applied = torch_state.update(inputs, targets)
    assert applied and (summary.skipped_now, summary.updates, summary.skipped) == (0, 2, 1)
    assert abs(summary.loss - loss) <= 1e-3 * loss
    assert not np.array_equal(runner.state().P, before.P)


def test_numpy_and_pytorch_skip_alike(torch_model):
    """The two references agree on the skip too (docs/coppelius.md: GradScaler's rule)."""
    config, data = SMALL, TEXT.read_bytes()
    state = model.fresh_state(config, seed=18)
    torch_state = torch_model(config, state.P, state.M, state.V)
    inputs, targets = model.context_at(data, 0, config.context)
    index = config.tensor("h2.wfc").offset + 11
    before = torch_state.numpy_state()
    assert not torch_state.update(inputs, targets, corrupt=(index, float("nan")))[2]
    for a, b in zip(before, torch_state.numpy_state()):
        assert np.array_equal(a, b)
    assert not model.update(config, state, inputs, targets, corrupt=(index, np.nan)).applied
    assert state.skipped == torch_state.skipped == 1
