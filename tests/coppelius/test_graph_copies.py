"""The update's launches that write only gradients (G[head], the weight-gradient products, the
layer norms' gain and bias gradients, the embedding's backward) read nothing that a later
launch of the update writes: each layer's binary16 gradients have their own residents
(layout.py: h{l}.du16, h{l}.dres16-ln2, h{l}.dqkv16, h{l}.dres16-ln1, lnf-dres16), so such a
launch may run beside the backward's chain (no write-after-read hazard between layers).

Found by running the update through the NumPy kernels (coppelius_model.kernels) with a memory
that records every byte range each launch touches and diffing the arena around each launch:
what a launch touched and did not change it read; what it changed it wrote (a write that
leaves every byte as it was goes unseen: the layers' gradients differ, so the shared dres16 of
before showed 8 hazards at tiny)."""
from __future__ import annotations

import numpy as np
from coppelius_model import graph, kernels, layout, model
from coppelius_model.config import TINY

from .conftest import TEXT


class Recording(kernels.FlatMemory):
    """FlatMemory that marks every byte a kernel takes a view of (reads and writes alike)."""

    def __init__(self, regions):
        super().__init__(regions)
        self.touched = [np.zeros(len(data), bool) for _, data in self.regions]

    def view(self, address, size):
        for index, (base, data) in enumerate(self.regions):
            if base <= address and address + size <= base + len(data):
                self.touched[index][address - base:address - base + size] = True
        return super().view(address, size)

    def snapshot(self):
        return [np.frombuffer(bytes(data), np.uint8) for _, data in self.regions]


def hazards(config):
    """(reader, writer, resident) for every gradient-only launch and later launch of the update
    that writes a byte the reader read."""
    residents = layout.arena(config)
    memory = Recording([(layout.ARENA_BASE, layout.arena_bytes(config)),
                        (layout.STAGING_BASE, layout.staging_bytes(config))])
    state = model.fresh_state(config, seed=3)
    memory.array(residents["parameters"].address, "<f4", config.parameter_count)[...] = state.P
    inputs, targets = model.context_at(TEXT.read_bytes(), 0, config.context)
    memory.array(layout.STAGING_BASE + layout.STAGING_INPUTS, "<u4", config.context)[...] = inputs
    memory.array(layout.STAGING_BASE + layout.STAGING_TARGETS, "<u4", config.context)[...] = targets
    pieces = {p.name: p for p in graph.pieces(config)}
    kernels.run(memory, pieces["forward"].launches)
    gradients = np.zeros(len(memory.regions[0][1]), bool)
    g = residents["gradients"]
    gradients[g.address - layout.ARENA_BASE:g.end - layout.ARENA_BASE] = True
    protected = [np.full(len(data), -1, np.int64) for _, data in memory.regions]   # the reading launch
    update = pieces["update"].launches
    found, gradient_only = [], 0

    def resident_at(region, offset):
        if region:
            return "staging"
        return next(r.name for r in residents.values() if r.address <= layout.ARENA_BASE + offset < r.end)

    for index, launch in enumerate(update):
        before = memory.snapshot()
        for mask in memory.touched:
            mask[:] = False
        kernels.run(memory, [launch])
        changed = [a != b for a, b in zip(before, memory.snapshot())]
        for region, mask in enumerate(changed):
            for reader in np.unique(protected[region][mask & (protected[region] >= 0)]):
                first = int(np.flatnonzero(mask & (protected[region] == reader))[0])
                found.append((update[reader].what, launch.what, resident_at(region, first)))
        if changed[0].any() and not (changed[0] & ~gradients).any() and not changed[1].any():
            gradient_only += 1      # what it touched and left as it was, outside the gradients, it read
            for region, mask in enumerate(memory.touched):
                read = mask & ~changed[region] & (~gradients if region == 0 else True)
                protected[region][read] = index
    # G[head], lnf's gain and bias, 4 products a layer, the batched ln2 and ln1 gains and biases, the embedding
    assert gradient_only == 1 + 1 + 4 * config.layers + 2 + 1, gradient_only
    return found


def test_no_later_launch_writes_what_a_gradient_only_launch_read():
    # tiny: two layers (a hazard between layers shows), seconds (small's arena takes a minute)
    assert hazards(TINY) == []
