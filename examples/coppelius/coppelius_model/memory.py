"""What a registered NumPy kernel reads and writes (bobc.reference.host's interface, shared by the
flat test memory in kernels.py and the fused attention launches' scratch in attention.py).

`Launched` is a launch's parameter block as a kernel reads it (bobc.reference.host.LaunchContext:
word, u32, f32); `ViewedMemory` gives read, write and array from a subclass's `view(address, size)`
(bobc.reference.host.Memory's four calls; `what`, the reason a caller may give, goes unused).
coppelius_host.device's simulated GPU memory is one too."""
from __future__ import annotations

import numpy as np


class Launched:
    """A launch as a registered kernel sees it (bobc.reference.host.LaunchContext's reads)."""

    def __init__(self, parameters: bytes):
        self.parameters = parameters

    def word(self, index):
        return int.from_bytes(self.parameters[8 * index:8 * index + 8], "little")

    def u32(self, offset):
        return int.from_bytes(self.parameters[offset:offset + 4], "little")

    def f32(self, offset):
        return float(np.frombuffer(self.parameters[offset:offset + 4], "<f4")[0])


class ViewedMemory:
    """read, write and array over `view` (a writable memoryview of [address, address + size))."""

    def view(self, address, size) -> memoryview:
        raise NotImplementedError

    def read(self, address, size, what: str = "") -> bytes:
        return bytes(self.view(address, size))

    def write(self, address, data: bytes, what: str = "") -> None:
        self.view(address, len(data))[:] = data

    def array(self, address, dtype, count):
        return np.frombuffer(self.view(address, np.dtype(dtype).itemsize * count), dtype=dtype)
