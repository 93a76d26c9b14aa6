"""Coppelius's GPU run by the simulator: the reference runner's device for seed 004's host
with every launch executed as the GPU executes it -- our own SASS kernels, from the
program image the host loaded, with the QMD's grid, block, registers and shared memory
and constant bank 0 as the host's images hold them (bobc.sim.channel.Channel's launch,
bobc.sim.executor) -- instead of the model's NumPy kernels (device.py).

What this adds over device.py: the NumPy kernels read only the parameters they know and
ignore the QMD's launch shape, and they assume what the kernels' contracts say (the split
products' tickets zero); the simulator runs the very code the GPU runs, so a QMD field,
a parameter word or a memory contents the kernels depend on (say, tickets that are not
zero) shows as a difference from the formula reference.  A mapping may start POISONED
(`poison`: bytes repeated over every mapped buffer the host does not load or write
itself), so a dependence on memory the host never initialised shows too.

It is slow (a Python simulator: minutes per update at the small configuration);
examples/coppelius/coppelius_host/sim_compare.py uses it on a few updates.
"""
from __future__ import annotations

import functools
from dataclasses import dataclass, field

import numpy as np

from .device import ARCH_TARGETS, REALIZATION, kernel_codes, launched_kernel


def _channel_class():
    from bobc.sim.channel import Channel

    from bobc.nvidia.residence import STAGE_IDENTITY

    class SimulatedChannel(Channel):
        launched: list = []
        staged: list = []

        def run_qmd(self, qmd_address, compute_class, at):
            described = self.describe(qmd_address, compute_class, at)
            kernel = launched_kernel(self.memory, described, qmd_address, at)
            # a QMD prefetching for its dependent (PREFETCH_POST) does not say where its code ends:
            # the code this channel recognised does
            self.code_bytes[qmd_address] = next(len(code) for code, name in kernel_codes(described.arch).items()
                                                if name == kernel)
            staging = kernel == STAGE_IDENTITY        # the residence's refresh, not one of the plan's launches
            self.launch_names[qmd_address] = kernel if staging else f"launch {len(self.launched)} ({kernel})"
            # held to its kernel's contract as `bobc sim` holds a plan's launches (bobc.sim.contracts)
            self.contracts = kernel_contracts(described.arch)
            self.contracts.kernels[qmd_address] = kernel
            dependents = super().run_qmd(qmd_address, compute_class, at)
            (self.staged if staging else self.launched).append(kernel)
            return dependents

    return SimulatedChannel


@functools.lru_cache(maxsize=None)
def kernel_contracts(arch: str):
    """The contracts of every kernel kernel_codes recognises for `arch` (each source's variant for
    the target where one exists; the program stage's own), read as `bobc sim` reads a plan's
    (bobc.sim.contracts.read_contracts: one that cannot be read is refused, not skipped).  Nothing
    of the arena is known here: Coppelius's extents name no `resident`."""
    from bobc.sim.contracts import LaunchContracts, read_contracts
    from bobc.targets import target_named

    target = target_named(ARCH_TARGETS[arch])
    return LaunchContracts(read_contracts(sorted(set(kernel_codes(arch).values())), target, [REALIZATION]), {},
                           target)


@dataclass
class SimulatedDevice:
    """The GPU of one host run, simulated: call it with (machine, entry) for every submission.
    `after(submission, machine)` (optional) is called after each submission (snapshots);
    `stop_after` n: the n-th submission raises StopSimulation once it has run."""

    entries: list = field(default_factory=list)
    launches: list = field(default_factory=list)
    stages: list = field(default_factory=list)        # every program stage (one a submission)
    check_hazards: bool = False
    after: object = None
    stop_after: int | None = None

    def __call__(self, machine, entry: int):
        from bobc.sim.memory import Buffer, Memory, Resident

        buffers, residents = [], []
        for k, m in enumerate(machine.mappings):
            name = f"buffer {k} (GPU {m.gpu:#x})"
            buffers.append(Buffer(name, m.gpu, np.frombuffer(m.memory, dtype=np.uint8)))
            residents.append(Resident(name, m.gpu, m.extent))
        # contracts: each QMD's, once run_qmd has read its architecture and recognised its kernel
        channel = _channel_class()(Memory(buffers, residents), check_hazards=self.check_hazards, contracts=None)
        channel.launched = self.launches
        channel.staged = self.stages
        channel.run_entry(entry.to_bytes(8, "little"), len(self.entries))
        self.entries.append(entry)
        if self.after is not None:
            self.after(len(self.entries) - 1, machine)
        if self.stop_after is not None and len(self.entries) >= self.stop_after:
            raise StopSimulation(len(self.entries))


class StopSimulation(Exception):
    """Raised after the submission `stop_after` names (the run is cut short on purpose)."""
