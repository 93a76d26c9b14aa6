"""The host side of coppelius_model.device.Runner (what the GPU tests and
bench/coppelius drive our kernels with) is the seed host's part done right: run on
the NumPy kernels (ReferenceBackend, model.update's arithmetic launch by launch), it
stages each context, writes each step's AdamW step size and epsilon, reads the loss
record and the state back, and injects a gradient after the backward, so that it
reproduces model.update bit for bit: two updates, then a corrupted one that is
skipped and counted with nothing written, then one more that trains."""
from __future__ import annotations

import numpy as np

from coppelius_model import device, model
from coppelius_model.config import TINY

from .conftest import TEXT


def test_the_runner_reproduces_model_update_and_the_skip():
    config, data = TINY, TEXT.read_bytes()
    start = model.fresh_state(config, seed=3)
    runner = device.Runner(config, device.ReferenceBackend(config))
    runner.load(start)
    assert np.array_equal(runner.state().H, start.H)
    reference = start.copy()
    index = config.tensor("h1.wqkv").offset + 7
    for step, corrupt in ((1, None), (2, None), (3, (index, np.inf)), (4, None)):
        inputs, targets = model.context_at(data, step * config.context, config.context)
        before = runner.state()
        ours = runner.update(inputs, targets, corrupt=corrupt)
        expected = model.update(config, reference, inputs, targets, corrupt=corrupt)
        assert ours.loss == np.float32(expected.loss)
        assert np.array_equal(ours.losses, expected.losses)
        assert (ours.skipped_now, ours.updates, ours.skipped) == (int(not expected.applied), step,
                                                                  reference.skipped)
        after = runner.state()
        for name in "PMVH":
            assert np.array_equal(getattr(after, name), getattr(reference, name)), (step, name)
        if corrupt is not None:
            assert all(np.array_equal(getattr(after, n), getattr(before, n)) for n in "PMVH")
    assert runner.step == reference.step == 4 and reference.skipped == 1
