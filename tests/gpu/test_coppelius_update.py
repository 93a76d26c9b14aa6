"""Coppelius against PyTorch on the H200 (docs/coppelius.md, "Numeric tolerances").

Fed the same weights and contexts, one whole update of the NumPy reference
(coppelius_model.model, the kernels' arithmetic) and of the PyTorch model
(tests/gpu/coppelius_torch.py, the same math through autograd and cuBLAS) agree: the
loss within 1e-3 relative, the master weights within 1e-3 of the update's size for
99.5% of the elements and within 2 alpha everywhere.  Over 200 updates on the shipped
English text both losses fall alike (the curves side by side in a PNG:
$COPPELIUS_CURVES, else the test's temporary folder).  An injected infinity skips the
update in both, writing nothing.  And our kernels themselves, launched through CuPy in
the launch graph's order with its parameter words, run the forward and one update like
the reference (this needs the kernels' sources, CGEMM's and CKERN's, in
examples/coppelius/Realization/Nvidia/SM86: it fails without them).
"""
from __future__ import annotations

import os
import sys
from pathlib import Path

import numpy as np
import pytest

pytestmark = pytest.mark.gpu

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "examples" / "coppelius"))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from coppelius_model import model  # noqa: E402
from coppelius_model.config import SMALL  # noqa: E402
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


def test_one_update_matches_pytorch(torch_model):
    data = TEXT.read_bytes()
    state = model.fresh_state(SMALL, seed=16)
    torch_state = torch_model(SMALL, state.P, state.M, state.V)
    inputs, targets = model.context_at(data, 0, SMALL.context)
    reference = model.update(SMALL, state, inputs, targets)
    loss, losses, applied = torch_state.update(inputs, targets)
    assert applied and reference.applied
    assert abs(loss - reference.loss) <= 1e-3 * abs(reference.loss)
    assert np.allclose(losses, reference.losses, rtol=1e-3)
    P, M, V, H = torch_state.numpy_state()
    alpha = float(model.adamw_scalars(SMALL, 1).step_size)
    moved = np.abs(P - state.P)
    assert np.quantile(moved, 0.995) <= 1e-3 * alpha
    assert moved.max() <= 2 * alpha * 1.001
    assert np.quantile(np.abs(H.astype(np.float32) - state.H.astype(np.float32)), 0.995) <= 1e-3 * alpha + 2 ** -11 * 0.01


def test_two_hundred_updates_learn_alike(torch_model, tmp_path):
    data = TEXT.read_bytes()
    state = model.fresh_state(SMALL, seed=17)
    torch_state = torch_model(SMALL, state.P, state.M, state.V)
    ours, theirs = [], []
    for step in range(STEPS):
        inputs, targets = model.context_at(data, step * SMALL.context, SMALL.context)
        ours.append(model.update(SMALL, state, inputs, targets).loss)
        theirs.append(torch_state.update(inputs, targets)[0])
    out = Path(os.environ.get("COPPELIUS_CURVES", tmp_path / "coppelius-curves.png"))
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_bytes(curves_png([ours, theirs]))
    (out.with_suffix(".csv")).write_text("step,numpy,pytorch\n" + "".join(
        f"{k + 1},{a:.6f},{b:.6f}\n" for k, (a, b) in enumerate(zip(ours, theirs))), encoding="utf-8")
    first, last = np.mean(ours[:10]), np.mean(ours[-20:])
    assert first - last > 1.0, (first, last)            # it learns: from ~5.5 nats toward the text's bytes
    assert abs(np.mean(theirs[-20:]) - last) <= 0.02 * last
    assert abs(theirs[0] - ours[0]) <= 1e-3 * ours[0]


def test_an_injected_infinity_skips_the_update_in_both(torch_model):
    data = TEXT.read_bytes()
    state = model.fresh_state(SMALL, seed=18)
    torch_state = torch_model(SMALL, state.P, state.M, state.V)
    inputs, targets = model.context_at(data, 0, SMALL.context)
    before = torch_state.numpy_state()
    index = SMALL.tensor("h2.wfc").offset + 11
    _, _, applied = torch_state.update(inputs, targets, corrupt=(index, float("inf")))
    assert not applied and torch_state.skipped == 1 and torch_state.step == 1
    for a, b in zip(before, torch_state.numpy_state()):
        assert np.array_equal(a, b)
    assert not model.update(SMALL, state, inputs, targets, corrupt=(index, np.inf)).applied
    # the next update trains again, in both, alike
    inputs, targets = model.context_at(data, SMALL.context, SMALL.context)
    loss, _, applied = torch_state.update(inputs, targets)
    reference = model.update(SMALL, state, inputs, targets)
    assert applied and reference.applied and abs(loss - reference.loss) <= 1e-3 * reference.loss


def test_the_kernels_run_one_update_like_the_reference(tmp_path):
    """The forward and update submissions of the launch graph, each launch our assembled
    kernel (examples/coppelius/Realization/Nvidia/SM86/<identity>.sass) launched through
    CuPy with the graph's parameter words, on an arena and a staging buffer allocated
    here: the loss record and the master weights agree with model.update within the
    whole-update tolerances."""
    cp = pytest.importorskip("cupy")
    from bobc.sass import assemble_kernel
    from bobc.sass.cubin import write_cubin
    from bobc.targets import TARGETS
    from coppelius_model import graph, layout

    target = TARGETS[f"sm_{cp.cuda.Device().compute_capability}"]
    data = TEXT.read_bytes()
    arena = cp.zeros(layout.arena_bytes(SMALL) // 4, dtype=cp.uint32)
    staging = cp.zeros(layout.staging_bytes(SMALL) // 4, dtype=cp.uint32)
    builder = graph.Builder(SMALL, arena_base=arena.data.ptr, staging_base=staging.data.ptr)
    residents = builder.r
    base, n = arena.data.ptr, SMALL.parameter_count

    def plane(name, dtype, count):
        start = residents[name].address - base
        return arena.view(cp.uint8)[start:start + np.dtype(dtype).itemsize * count].view(dtype)

    state = model.fresh_state(SMALL, seed=19)
    plane("parameters", np.float32, n)[...] = cp.asarray(state.P)
    inputs, targets = model.context_at(data, 0, SMALL.context)
    staging[layout.STAGING_INPUTS // 4:layout.STAGING_INPUTS // 4 + SMALL.context] = cp.asarray(inputs)
    staging[layout.STAGING_TARGETS // 4:layout.STAGING_TARGETS // 4 + SMALL.context] = cp.asarray(targets)

    shared = {"coppelius-gemm-nn": 30208, "coppelius-gemm-nt": 31744, "coppelius-gemm-tn": 28672}
    functions, modules = {}, []
    pieces = {p.name: p for p in builder.pieces()}
    launches = pieces["forward"].launches + pieces["update"].launches
    for launch in launches:
        if launch.kernel in functions:
            continue
        source = REPO / "examples/coppelius/Realization/Nvidia/SM86" / f"{launch.kernel}.sass"
        assert source.is_file(), f"no kernel source {source}"
        symbol = launch.kernel.replace("-", "_")
        path = tmp_path / f"{launch.kernel}.cubin"
        path.write_bytes(write_cubin(assemble_kernel(source, target), symbol, target, 8 * len(launch.words), launch.block))
        module = cp.RawModule(path=str(path))
        modules.append(module)
        functions[launch.kernel] = module.get_function(symbol)
    for launch in launches:
        words = tuple(np.uint64(w) for w in launch.words)
        functions[launch.kernel](launch.grid, (launch.block, 1, 1), words, shared_mem=shared.get(launch.kernel, 0))
    cp.cuda.Device().synchronize()

    reference = model.update(SMALL, state, inputs, targets)
    window = cp.asnumpy(staging[layout.STAGING_LOSS_WINDOW // 4:layout.STAGING_LOSS_WINDOW // 4 + 4]).tobytes()
    mean = np.frombuffer(window[:4], "<f4")[0]
    assert abs(mean - reference.loss) <= 1e-3 * reference.loss
    assert np.frombuffer(window[4:], "<u4").tolist() == [0, 1, 0]
    alpha = float(model.adamw_scalars(SMALL, 1).step_size)
    moved = np.abs(cp.asnumpy(plane("parameters", np.float32, n)) - state.P)
    assert np.quantile(moved, 0.995) <= 1e-3 * alpha
    assert moved.max() <= 2 * alpha * 1.001
    half = cp.asnumpy(plane("half-parameters", np.float16, n)).astype(np.float32)
    assert np.quantile(np.abs(half - state.H.astype(np.float32)), 0.995) <= 1e-3 * alpha + 2 ** -11 * 0.01
