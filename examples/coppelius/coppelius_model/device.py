"""Coppelius's launch graph run on a GPU through CuPy, with our own kernels: what the
GPU tests and bench/coppelius use to run whole updates before the seed's native host
(which submits the same launches through its pushbuffer) exists.

A Runner owns an arena and a staging buffer, builds graph.py's launches at their
addresses and plays the host's part the way docs/coppelius.md describes it: it loads
a state (master weights, moments, zero counters), runs the forward submission once
(its half-copy launch makes the half copies), and for each update stages the context
(u32 tokens at STAGING_INPUTS and STAGING_TARGETS), writes that step's AdamW step size
and epsilon into both AdamW launches (bytes 48 and 52 of their blocks), runs the
update submission's launches in order and reads the loss record back.

The launches go to a backend: CupyBackend (our .sass assembled by bobc, wrapped by
write_cubin, loaded with cupy.RawModule and launched one by one on the current
stream: CuPy cubin launches, not the pushbuffer), or ReferenceBackend (the NumPy
kernels of coppelius_model.kernels on a FlatMemory), which lets the host side of this
module be tested where there is no GPU (tests/coppelius/test_device_runner.py).
"""
from __future__ import annotations

import struct
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from . import graph, layout, model
from .config import CoppeliusConfig

SOURCES = Path(__file__).resolve().parents[1] / "Realization" / "Nvidia" / "SM86"


@dataclass(frozen=True)
class Summary:
    """One update's loss record (docs/coppelius.md, the staging buffer's loss window)."""

    loss: float
    skipped_now: int
    updates: int
    skipped: int
    losses: np.ndarray


class ReferenceBackend:
    """The NumPy kernels of coppelius_model.kernels (model.update's arithmetic) on a
    FlatMemory at the plan's addresses: a stand-in GPU for testing the Runner's host side."""

    def __init__(self, config: CoppeliusConfig):
        from . import kernels
        self.kernels, self._launched = kernels.KERNELS, kernels.Launched
        self.memory = kernels.FlatMemory([(layout.ARENA_BASE, layout.arena_bytes(config)),
                                          (layout.STAGING_BASE, layout.staging_bytes(config))])
        self.bases = [layout.ARENA_BASE, layout.STAGING_BASE]

    def allocate(self, nbytes: int) -> int:
        return self.bases.pop(0)

    def write(self, address: int, array: np.ndarray) -> None:
        self.memory.write(address, np.ascontiguousarray(array).tobytes())

    def read(self, address: int, dtype, count: int) -> np.ndarray:
        return self.memory.array(address, dtype, count).copy()

    def prepare(self, launch: graph.Launch):
        return launch

    def launch(self, prepared, words=None) -> None:
        block = prepared.parameters() if words is None else b"".join(struct.pack("<Q", w) for w in words)
        self.kernels[prepared.kernel](self.memory, self._launched(block))

    def synchronize(self) -> None:
        pass


class CupyBackend:
    """Our kernels on the current CUDA device through CuPy: each .sass assembled for the
    device's target (bobc.sass.assemble_kernel), wrapped by write_cubin with its launch's
    parameter size and block, loaded with cupy.RawModule; a launch is one
    RawKernel call on the current stream (dynamic shared memory = the gemm variant's, or what
    another kernel's `.shared` declares: coppelius-attention-forward's, past 48 KiB by CUDA's opt-in)."""

    def __init__(self, folder: Path, sources: Path = SOURCES):
        import cupy as cp
        from bobc.targets import TARGETS
        self.cp, self.folder, self.sources = cp, Path(folder), Path(sources)
        self.target = TARGETS[f"sm_{cp.cuda.Device().compute_capability}"]
        self.buffers = []           # (base address, cupy uint8 array)
        self.functions = {}
        self.shared = {}            # kernel -> its source's `.shared` bytes (0 when it declares none)
        self.modules = []

    def allocate(self, nbytes: int) -> int:
        buffer = self.cp.zeros(nbytes, dtype=self.cp.uint8)
        self.buffers.append((buffer.data.ptr, buffer))
        return buffer.data.ptr

    def _span(self, address: int, nbytes: int):
        for base, buffer in self.buffers:
            if base <= address and address + nbytes <= base + buffer.size:
                return buffer[address - base:address - base + nbytes]
        raise IndexError(f"no buffer holds [{address:#x}, {address + nbytes:#x})")

    def write(self, address: int, array: np.ndarray) -> None:
        data = np.ascontiguousarray(array).view(np.uint8).reshape(-1)
        self._span(address, data.size).set(data)

    def read(self, address: int, dtype, count: int) -> np.ndarray:
        return self._span(address, np.dtype(dtype).itemsize * count).get().view(dtype)

    def array(self, address: int, dtype, count: int):
        """A CuPy view of device memory (for on-device comparisons)."""
        return self._span(address, np.dtype(dtype).itemsize * count).view(dtype)

    def function(self, kernel: str, words: int, block: int):
        if kernel not in self.functions:
            from bobc.sass import assemble_kernel
            from bobc.sass.cubin import write_cubin
            assembled = assemble_kernel(self.sources / f"{kernel}.sass", self.target)
            path = self.folder / f"{kernel}.{self.target.name}.cubin"
            path.write_bytes(write_cubin(assembled, assembled.kernel_name, self.target, 8 * words, block))
            module = self.cp.RawModule(path=str(path))
            self.modules.append(module)
            function = module.get_function(assembled.kernel_name)
            self.shared[kernel] = assembled.shared_bytes or 0
            if self.shared[kernel] > 48 * 1024 and not kernel.startswith("coppelius-gemm-"):
                function.max_dynamic_shared_size_bytes = self.shared[kernel]    # above 48 KiB needs the opt-in
            self.functions[kernel] = function
        return self.functions[kernel]

    def prepare(self, launch: graph.Launch):
        function = self.function(launch.kernel, len(launch.words), launch.block)
        shared = self.shared[launch.kernel]
        if launch.kernel.startswith("coppelius-gemm-"):
            from bobc.sass.generate import gemm
            shared = gemm.shared_bytes(gemm.VARIANTS[launch.kernel.removeprefix("coppelius-gemm-")])
        return (function, launch.grid, (launch.block, 1, 1), tuple(np.uint64(w) for w in launch.words), shared)

    def launch(self, prepared, words=None) -> None:
        function, grid, block, args, shared = prepared
        if words is not None:
            args = tuple(np.uint64(w) for w in words)
        function(grid, block, args, shared_mem=shared)

    def synchronize(self) -> None:
        self.cp.cuda.get_current_stream().synchronize()


class Runner:
    """One Coppelius (configuration, arena, staging buffer) on a backend, run the way the
    seed's host runs it: the forward submission once, then one update submission per step."""

    def __init__(self, config: CoppeliusConfig, backend):
        self.config, self.backend = config, backend
        self.arena_base = backend.allocate(layout.arena_bytes(config))
        self.staging_base = backend.allocate(layout.staging_bytes(config))
        self.builder = graph.Builder(config, arena_base=self.arena_base, staging_base=self.staging_base)
        self.residents = self.builder.r
        self.pieces = {p.name: p for p in self.builder.pieces()}
        self.forward_launches = [backend.prepare(l) for l in self.pieces["forward"].launches]
        self.update_raw = self.pieces["update"].launches
        self.update_launches = [backend.prepare(l) for l in self.update_raw]
        self.adamw_indices = [i for i, l in enumerate(self.update_raw) if l.kernel == "coppelius-adamw-half"]
        self.check_index = next(i for i, l in enumerate(self.update_raw) if l.kernel == "coppelius-nonfinite-check")
        self.step = 0

    def address(self, resident: str, offset: int = 0) -> int:
        return self.residents[resident].address + offset

    def load(self, state: model.State) -> None:
        """Master weights and moments from `state`, counters zero, then the forward
        submission (its half-copy launch writes the half copies)."""
        n = self.config.parameter_count
        for name, values in (("parameters", state.P), ("first-moments", state.M), ("second-moments", state.V)):
            self.backend.write(self.address(name), np.asarray(values, np.float32)[:n])
        self.backend.write(self.address("counters"), np.zeros(4, np.uint32))
        self.step = state.step
        self.stage(np.zeros(self.config.context, np.uint32), np.zeros(self.config.context, np.uint32))
        for prepared in self.forward_launches:
            self.backend.launch(prepared)
        self.backend.synchronize()

    def stage(self, inputs, targets) -> None:
        T = self.config.context
        self.backend.write(self.staging_base + layout.STAGING_INPUTS, np.asarray(inputs, np.uint32)[:T])
        self.backend.write(self.staging_base + layout.STAGING_TARGETS, np.asarray(targets, np.uint32)[:T])

    def adamw_words(self, step: int) -> dict[int, tuple[int, ...]]:
        """Both AdamW launches' words with step `step`'s step size and epsilon (the host's
        binary64 ratios rounded to binary32, word 6)."""
        s = model.adamw_scalars(self.config, step)
        out = {}
        for index in self.adamw_indices:
            words = list(self.update_raw[index].words)
            words[6] = graph.pair(graph.f32(float(s.step_size)), graph.f32(float(s.epsilon)))
            out[index] = tuple(words)
        return out

    def launch_update(self, step: int, stop: int | None = None, start: int = 0) -> None:
        """The update submission's launches [start, stop) with step `step`'s AdamW scalars."""
        patched = self.adamw_words(step)
        for index in range(start, len(self.update_launches) if stop is None else stop):
            self.backend.launch(self.update_launches[index], patched.get(index))

    def update(self, inputs, targets, corrupt: tuple[int, float] | None = None) -> Summary:
        """One update on one context; `corrupt` (flat index, value) overwrites that gradient
        element after the backward, before the non-finite check (the injected-infinity test)."""
        self.step += 1
        self.stage(inputs, targets)
        if corrupt is None:
            self.launch_update(self.step)
        else:
            self.launch_update(self.step, stop=self.check_index)
            self.backend.synchronize()
            self.backend.write(self.address("gradients", 4 * corrupt[0]), np.array([corrupt[1]], np.float32))
            self.launch_update(self.step, start=self.check_index)
        self.backend.synchronize()
        return self.summary()

    def summary(self) -> Summary:
        T = self.config.context
        window = self.backend.read(self.staging_base + layout.STAGING_LOSS_WINDOW, np.uint8,
                                   layout.loss_window_bytes(self.config)).tobytes()
        loss, skipped_now, updates, skipped = struct.unpack_from("<fIII", window)
        return Summary(float(loss), skipped_now, updates, skipped,
                       np.frombuffer(window, "<f4", count=T, offset=layout.SUMMARY_BYTES).copy())

    def gradients(self) -> np.ndarray:
        """The last update's S x gradient (the gradients resident, flat binary32)."""
        return self.backend.read(self.address("gradients"), np.float32, self.config.parameter_count)

    def state(self) -> model.State:
        """The arena's learner state read back (P, M, V binary32, H binary16)."""
        n = self.config.parameter_count
        P, M, V = (self.backend.read(self.address(name), np.float32, n)
                   for name in ("parameters", "first-moments", "second-moments"))
        H = self.backend.read(self.address("half-parameters"), np.float16, n)
        counters = self.backend.read(self.address("counters"), np.uint32, 4)
        return model.State(P, M, V, H, skipped=int(counters[3]), step=self.step)
