"""Seed 003's GPU, emulated from the images a host loads (no GPU needed).

A Submit's ring entry is decoded the way the GPU reads it (bobc.sim.channel: GPFIFO entry ->
pushbuffer segment -> methods), each launch's QMD read (bobc.sim.qmd_reader: program address,
constant bank 0), the kernel recognised by its machine code (our two SASS kernels, assembled
for the QMD's architecture) and its pointer arguments read from bank 0 at the target's
parameter base; the kernel's arithmetic is reference.py's.  Every segment must set the
channel up itself (SET_OBJECT, windows: any entry may be the first issued) and add 1 to the
one semaphore (a 64-bit reduction): the device checks that the n-th issue leaves it at n,
which is what the host's Submit waits for.

`EmulatedDevice()(machine, entry)` works with any interpreter whose machine has
mapped_read(address, count) and mapped_write(address, data): tests/specs/native_program.py's,
and bobc's reference runner (reference_kernels.py's SUBMIT).
"""
from __future__ import annotations

import struct
from dataclasses import dataclass, field
from pathlib import Path

from . import reference as R

REALIZATION = Path(__file__).resolve().parents[1] / "PartitionedRegression/Realization"
PARAMETER_BASE = {"SM86": 0x160, "SM90": 0x210}
SEMAPHORE_BASE = 0x2030000000           # PartitionedRegression.Coordinates.coordinateSemaphoreBase


def kernel_codes(arch: str) -> dict[bytes, str]:
    from bobc.sass.assembler import assemble_kernel
    import bobc.targets as targets
    name = {"SM86": "sm_86", "SM90": "sm_90"}[arch]
    target = next(t for t in vars(targets).values() if getattr(t, "name", None) == name and hasattr(t, "nvdisasm_arch"))
    # as a plan's build assembles them (bobc.kernel_cache: the target's launch prologue first)
    return {bytes(assemble_kernel(REALIZATION / f"{kernel}.sass", target, launched=True).code): kernel
            for kernel in ("coordinate-linear-step", "coordinate-update")}


class _MappedMemory:
    def __init__(self, machine):
        self.machine = machine

    def read(self, address, size, what=""):
        return self.machine.mapped_read(address, size)

    def write(self, address, data, what=""):
        self.machine.mapped_write(address, data)


def _channel_class():
    from bobc.sim.channel import Channel

    class KernelChannel(Channel):
        codes: dict = {}

        def run_qmd(self, qmd_address, compute_class, at):
            d = self.describe(qmd_address, compute_class, at)
            if d.arch not in self.codes:
                self.codes[d.arch] = kernel_codes(d.arch)
            kernel = next((name for code, name in self.codes[d.arch].items()
                           if self.memory.read(d.program_address, len(code)) == code), None)
            if kernel is None:
                raise AssertionError(f"{at}: the QMD at {qmd_address:#x} launches code that is none of our kernels")
            bank0 = self.memory.read(d.cb0_address, d.cb0_bytes)
            base = PARAMETER_BASE[d.arch]
            pointer = lambda i: struct.unpack_from("<Q", bank0, base + 8 * i)[0]
            word = lambda address: struct.unpack("<d", self.memory.read(address, 8))[0]
            put = lambda address, value: self.memory.write(address, struct.pack("<d", value))
            if kernel == "coordinate-linear-step":
                results = R.linear_step(word(pointer(0)), word(pointer(1)), word(pointer(2)))
                for i, value in enumerate(results):
                    put(pointer(3) + 8 * i, value)
            else:
                w, a = R.update(word(pointer(0)), word(pointer(1)), word(pointer(2)), word(pointer(3)), word(pointer(4)))
                put(pointer(1), a)
                put(pointer(0), w)
            self.log.launches.append((qmd_address, kernel))
            return d.dependents              # the channel runs the QMDs this one schedules

    return KernelChannel


@dataclass
class EmulatedDevice:
    """The GPU of one host: the images it loaded are in its machine's mapped memory."""
    launches: list = field(default_factory=list)
    channel: object = None

    def __call__(self, machine, entry: int):
        if self.channel is None:
            self.channel = _channel_class()(_MappedMemory(machine), contracts=None)     # NumPy kernels: no SASS runs
        self.channel.bound.clear()           # nothing carries over: each segment sets the channel up
        self.channel.run_entry(entry.to_bytes(8, "little"), len(self.launches))
        self.launches.append(entry)
        semaphore = machine.mapped_read(SEMAPHORE_BASE, 8)
        assert int.from_bytes(semaphore, "little") == len(self.launches), \
            f"after issue {len(self.launches)} the semaphore holds {semaphore.hex()}: the images do not count issues"
