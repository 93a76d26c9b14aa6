"""A corrupted gradient (an injected infinity or NaN) skips the update and counts it,
as PyTorch's GradScaler skips optimizer.step: nothing is written to the master
weights, the moments or the half copies; the loss record says so; the next update
trains again.  Run through the launch graph (the injected value lands in the
gradients before the non-finite check) and through model.update."""
from __future__ import annotations

import struct

import numpy as np
import pytest

from coppelius_model import graph, kernels, layout, model
from coppelius_model.config import TINY

from .conftest import TEXT


def arena_with(state):
    residents = layout.arena(TINY)
    memory = kernels.FlatMemory([(layout.ARENA_BASE, layout.arena_bytes(TINY)),
                                 (layout.STAGING_BASE, layout.staging_bytes(TINY))])
    n = TINY.parameter_count
    for name, value in (("parameters", state.P), ("first-moments", state.M), ("second-moments", state.V)):
        memory.array(residents[name].address, "<f4", n)[...] = value
    return memory, residents


@pytest.mark.parametrize("bad", [np.inf, -np.inf, np.nan])
def test_a_non_finite_gradient_skips_the_update_and_counts_it(bad):
    state = model.fresh_state(TINY, seed=1)
    memory, residents = arena_with(state)
    pieces = {p.name: p for p in graph.pieces(TINY)}
    text = TEXT.read_bytes()
    inject = TINY.tensor("h1.wfc").offset + 5

    def corrupting(memory, launch):
        kernels.KERNELS["coppelius-embedding-backward"](memory, launch)
        memory.array(residents["gradients"].address, "<f4", TINY.parameter_count)[inject] = bad

    def stage(step):
        inputs, targets = model.context_at(text, step * TINY.context, TINY.context)
        memory.array(layout.STAGING_BASE + layout.STAGING_INPUTS, "<u4", TINY.context)[...] = inputs
        memory.array(layout.STAGING_BASE + layout.STAGING_TARGETS, "<u4", TINY.context)[...] = targets

    def window():
        return struct.unpack_from("<fIII", bytes(memory.array(layout.STAGING_BASE + layout.STAGING_LOSS_WINDOW, "<u1", 16)))

    stage(0)
    kernels.run(memory, pieces["forward"].launches)
    n = TINY.parameter_count
    before = {name: memory.array(residents[name].address, dtype, n).copy()
              for name, dtype in (("parameters", "<f4"), ("first-moments", "<f4"), ("second-moments", "<f4"),
                                  ("half-parameters", "<f2"))}
    kernels.run(memory, pieces["update"].launches, kernels={**kernels.KERNELS, "coppelius-embedding-backward": corrupting})
    for name, dtype in (("parameters", "<f4"), ("first-moments", "<f4"), ("second-moments", "<f4"),
                        ("half-parameters", "<f2")):
        assert np.array_equal(memory.array(residents[name].address, dtype, n), before[name]), name
    mean, skipped, updates, total = window()
    assert (skipped, updates, total) == (1, 1, 1) and np.isfinite(mean)
    assert list(memory.array(residents["counters"].address, "<u4", 4)) == [0, 0, 1, 1]   # flag cleared
    # the next update trains
    stage(1)
    kernels.run(memory, pieces["update"].launches)
    assert window()[1:] == (0, 2, 1)
    assert not np.array_equal(memory.array(residents["parameters"].address, "<f4", n), before["parameters"])


def test_model_update_skips_the_same_way():
    state = model.fresh_state(TINY, seed=1)
    before = state.copy()
    inputs, targets = model.context_at(TEXT.read_bytes(), 0, TINY.context)
    result = model.update(TINY, state, inputs, targets, corrupt=(17, np.inf))
    assert not result.applied and state.skipped == 1 and state.step == 1
    for name in "PMVH":
        assert np.array_equal(getattr(state, name), getattr(before, name))
    assert model.update(TINY, state, inputs, targets).applied and state.step == 2
