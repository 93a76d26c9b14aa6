"""Coppelius's GPU, emulated from the images a built host loads: the reference runner's
SUBMIT for seed 004's host (`bobc run ... native ... --reference --kernels
examples/coppelius/coppelius_host/reference_submit.py`, and the tests).

A submission's ring entry is decoded the way the GPU reads it (bobc.sim.channel: GPFIFO
entry -> pushbuffer segment -> methods) from the host's own buffers (the machine's
mappings, by GPU address: the arena is one of them even though the host never maps it);
each launch's QMD is read by the simulator's reader (bobc.sim.qmd_reader), its kernel
recognised by its machine code (every Coppelius kernel source assembled for the QMD's
architecture), its parameters read from constant bank 0 at the target's parameter base,
and its arithmetic is the model's NumPy kernels (coppelius_model.kernels).
Every segment must set the channel up itself and add 1 to the one semaphore (a 64-bit
reduction), which is what the host's Submit waits for.

The device keeps a trace: every entry issued (`entries`), every launch's kernel
(`launches`), which the tests count against the seed's numbers, and every program stage
(`stages`: bobc's copy of the program table into its residence, first in every submission).
"""
from __future__ import annotations

import functools
import sys
from dataclasses import dataclass, field
from pathlib import Path

EXAMPLE = Path(__file__).resolve().parents[1]
REALIZATION = EXAMPLE / "Realization" / "Nvidia" / "SM86"
ARCH_TARGETS = {"SM86": "sm_86", "SM90": "sm_90"}
if str(EXAMPLE) not in sys.path:
    sys.path.insert(0, str(EXAMPLE))

from coppelius_model.memory import Launched, ViewedMemory  # noqa: E402  (the path above)


def reference_kernels() -> dict:
    """The model's own NumPy kernels (coppelius_model.kernels: model.update's arithmetic
    launch by launch, bit for bit: tests/coppelius/test_graph_executes.py), and bobc's program
    stage (the copy into the program residence that starts every submission)."""
    from bobc.nvidia.residence import STAGE_IDENTITY, stage_reference
    from coppelius_model.kernels import KERNELS
    return {**KERNELS, STAGE_IDENTITY: stage_reference}


@functools.lru_cache(maxsize=None)
def kernel_codes(arch: str) -> dict[bytes, str]:
    """Machine code -> kernel identity, for every kernel source (one per kernel; its target variant where
    one exists) assembled for `arch` (SM86, SM90)."""
    from bobc.kernel_cache import assemble_kernel
    from bobc.kernel_search import variant_of, variant_suffix
    from bobc.targets import target_named

    from bobc.nvidia.residence import STAGE_IDENTITY, stage_kernel

    target = target_named(ARCH_TARGETS[arch])
    codes = {bytes(assemble_kernel(variant_of(source, target), target).code): source.stem
             for source in sorted(REALIZATION.glob("coppelius-*.sass")) if variant_suffix(source) is None}
    return {**codes, bytes(stage_kernel(target).code): STAGE_IDENTITY}


def launched_kernel(memory, described, qmd_address: int, at: str) -> str:
    """The identity of the kernel a QMD (read by bobc.sim.qmd_reader) launches, by its code."""
    def holds(code: bytes) -> bool:
        try:
            return memory.read(described.program_address, len(code)) == code
        except Exception:       # a longer kernel's code would run past the buffer: not this one
            return False

    codes = kernel_codes(described.arch)
    kernel = next((name for code, name in codes.items() if holds(code)), None)
    if kernel is None:
        raise AssertionError(f"{at}: the QMD at {qmd_address:#x} launches code that is none of "
                             f"Coppelius's kernels")
    return kernel


class GPUMemory(ViewedMemory):
    """The machine's buffers by GPU address, read and written as the model's kernels do
    (view/read/write/array: coppelius_model.kernels.FlatMemory's interface)."""

    def __init__(self, machine):
        self.machine = machine

    def view(self, address: int, size: int) -> memoryview:
        for m in self.machine.mappings:
            if m.gpu <= address and address + size <= m.gpu + m.extent:
                return memoryview(m.memory)[address - m.gpu:address - m.gpu + size]
        raise IndexError(f"the GPU reads [{address:#x}, +{size:#x}), which no buffer of the host holds")


def _channel_class():
    from bobc.sim.channel import Channel
    from bobc.targets import target_named

    from bobc.nvidia.residence import STAGE_IDENTITY

    class KernelChannel(Channel):
        kernels: dict = {}
        launched: list = []
        staged: list = []

        def run_qmd(self, qmd_address, compute_class, at):
            described = self.describe(qmd_address, compute_class, at)
            kernel = launched_kernel(self.memory, described, qmd_address, at)
            base = target_named(ARCH_TARGETS[described.arch]).parameter_base
            bank0 = self.memory.read(described.cb0_address, described.cb0_bytes)
            self.kernels[kernel](self.memory, Launched(bank0[base:]))
            staging = kernel == STAGE_IDENTITY        # the residence's refresh, not one of the plan's launches
            (self.staged if staging else self.launched).append(kernel)
            return described.dependents         # the channel runs the QMDs this one schedules

    return KernelChannel


@dataclass
class EmulatedDevice:
    """The GPU of one host run: call it with (machine, entry) for every submission."""

    entries: list = field(default_factory=list)       # every ring entry issued, in order
    launches: list = field(default_factory=list)      # every launch's kernel, in order
    stages: list = field(default_factory=list)        # every program stage (one a submission)
    kernels: dict = field(default_factory=reference_kernels)

    def __call__(self, machine, entry: int):
        channel = _channel_class()(GPUMemory(machine), contracts=None)     # the model's NumPy kernels: no SASS runs
        channel.kernels = self.kernels
        channel.launched = self.launches
        channel.staged = self.stages
        channel.run_entry(entry.to_bytes(8, "little"), len(self.entries))
        self.entries.append(entry)
