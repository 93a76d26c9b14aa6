"""The launch graph is the model: the forward and update submissions of graph.py, run
launch by launch through the NumPy kernels (coppelius_model.kernels) on the arena and
the staging buffer at their GPU addresses, give the master weights, moments, half
copies, counters and loss records of model.update -- the formula reference -- for
two updates of the small configuration and of a one-layer shape (docs/coppelius.md,
"Shapes"), bit for bit (the same arithmetic, launch by launch).  A wrong pointer, shape,
stride or flag in any launch's parameter words changes the result."""
from __future__ import annotations

import struct

import numpy as np
import pytest

from coppelius_model import graph, kernels, layout, model
from coppelius_model.config import LARGE, SMALL, named

from .conftest import TEXT


@pytest.fixture(scope="module", params=[SMALL, named("1x256x128")], ids=["small", "1x256x128"])
def runs(request):
    config = request.param
    data = TEXT.read_bytes()
    residents = layout.arena(config)
    memory = kernels.FlatMemory([(layout.ARENA_BASE, layout.arena_bytes(config)),
                                 (layout.STAGING_BASE, layout.staging_bytes(config))])
    state = model.fresh_state(config, seed=5)
    n = config.parameter_count
    memory.array(residents["parameters"].address, "<f4", n)[...] = state.P
    memory.array(residents["first-moments"].address, "<f4", n)[...] = 0
    memory.array(residents["second-moments"].address, "<f4", n)[...] = 0
    memory.array(residents["counters"].address, "<u4", 4)[...] = 0
    pieces = {p.name: p for p in graph.pieces(config)}

    def stage_context(position):
        inputs, targets = model.context_at(data, position, config.context)
        memory.array(layout.STAGING_BASE + layout.STAGING_INPUTS, "<u4", config.context)[...] = inputs
        memory.array(layout.STAGING_BASE + layout.STAGING_TARGETS, "<u4", config.context)[...] = targets
        return inputs, targets

    def patch_for(step):
        scalars = model.adamw_scalars(config, step)

        def patch(launch):
            block = bytearray(launch.parameters())
            if launch.kernel == "coppelius-adamw-half":
                block[48:56] = struct.pack("<ff", scalars.step_size, scalars.epsilon)
            return bytes(block)
        return patch

    stage_context(0)
    kernels.run(memory, pieces["forward"].launches)
    reference = state.copy()
    results = []
    for step in (1, 2):
        inputs, targets = stage_context((step - 1) * config.context)
        kernels.run(memory, pieces["update"].launches, patch=patch_for(step))
        window = bytes(memory.array(layout.STAGING_BASE + layout.STAGING_LOSS_WINDOW, "<u1",
                                    layout.loss_window_bytes(config)))
        results.append((model.update(config, reference, inputs, targets), window))
    return config, memory, residents, reference, results


def test_master_weights_moments_and_half_copies_agree(runs):
    config, memory, residents, reference, _ = runs
    n = config.parameter_count
    for name, expected in (("parameters", reference.P), ("first-moments", reference.M),
                           ("second-moments", reference.V)):
        assert np.array_equal(memory.array(residents[name].address, "<f4", n), expected), name
    assert np.array_equal(memory.array(residents["half-parameters"].address, "<f2", n), reference.H)
    assert reference.P.std() > 0 and not np.array_equal(reference.P, model.fresh_state(config, seed=5).P)


def test_loss_records_and_counters(runs):
    config, memory, residents, reference, results = runs
    for update, window in results:
        mean, skipped, updates, total = struct.unpack_from("<fIII", window)
        assert mean == pytest.approx(update.loss, rel=1e-6)
        losses = np.frombuffer(window, "<f4", offset=16)
        assert np.array_equal(losses, update.losses)
        assert skipped == 0 and total == 0
    assert updates == 2
    assert list(memory.array(residents["counters"].address, "<u4", 4)) == [0, 0, 2, 0]


@pytest.mark.parametrize("config", [SMALL, LARGE], ids=["small", "large"])
def test_the_batched_layer_norm_gradients_name_every_layers_residents(config):
    """The update's two batched coppelius-layernorm-param-backward launches (every layer's ln2,
    then ln1): batch l's six pointers, word + 4 l stride (words 7..10, the kernel's contract),
    are exactly layer l's x (h for ln2), mean, rstd, kept dy and gain / bias gradients."""
    builder = graph.Builder(config)
    batched = [l for l in graph.update_launches(config)
               if l.kernel == "coppelius-layernorm-param-backward" and l.grid[1] > 1]
    assert [l.grid for l in batched] == [(config.width // 64, config.layers, 1)] * 2
    for launch, (norm, x) in zip(batched, (("ln2", "h"), ("ln1", "x"))):
        w = launch.words
        strides = [w[7] & 0xFFFFFFFF, w[7] >> 32, w[8] & 0xFFFFFFFF, w[8] >> 32, w[9] & 0xFFFFFFFF, w[9] >> 32]
        assert w[10] == config.layers
        for layer in range(config.layers):
            n = f"h{layer}."
            want = {0: builder.at(n + x), 3: builder.at(n + norm + "-dy"), 1: builder.at(n + norm + "-mean"),
                    2: builder.at(n + norm + "-rstd"), 4: builder.G(n + norm + ".g"), 5: builder.G(n + norm + ".b")}
            for word, stride in zip((0, 3, 1, 2, 4, 5), strides):
                assert w[word] + 4 * layer * stride == want[word], (norm, layer, word)
