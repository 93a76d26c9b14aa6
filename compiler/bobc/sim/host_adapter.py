"""The one module that reads the host plan: what the native host would do, as plain data.

The generated host (bobc.host.generate + runtime_c/plan_host.c) is data:
buffers (GPU address, size, which image fills them), semaphores, parameter
blocks, AdamW pointers and hyperparameters, and the schedule as steps.  This
adapter takes exactly that data from the same functions the host generator
uses, so the simulator carries out the schedule the host would; when the
plan's host description changes shape, only this module changes.
"""
from __future__ import annotations

import struct
from dataclasses import dataclass

from ..host import generate
from ..reference.formats import Hyperparameters
from .memory import Resident

FILE_NAMES = {number: name for name, number in generate.FILES.items()}
OP_NAMES = {number: name for name, number in generate.OPS.items()}
IMAGE_OF_SECTION = {"program": "program", "qmd": "qmd", "pushbuffer": "push", "gpfifo": "gpfifo"}


@dataclass(frozen=True)
class HostBuffer:
    name: str
    address: int
    size: int
    image: str | None          # which image fills it: program, qmd, push, gpfifo


@dataclass(frozen=True)
class HostStep:
    op: str                    # submit, read, write, write_at, operation, checkpoint_begin, checkpoint_publish, adamw
    file: str | None
    a: int
    b: int
    c: int
    d: int


@dataclass(frozen=True)
class HostPlan:
    target: str
    buffers: tuple[HostBuffer, ...]
    residents: tuple[Resident, ...]
    steps: tuple[HostStep, ...]
    semaphores: tuple[int, ...]           # per ring entry
    semaphore_payload: int
    parameter_blocks: tuple[int, ...]     # per launch
    parameter_base: int
    prologue_entry: bytes
    adamw_pointers: tuple[int, int, int, int]   # P, G, M, V
    hyper: Hyperparameters
    parameter_count: int
    contract: object
    launch_names: dict                    # QMD address -> "launch i (identity)", for messages


def _float(bits: int) -> float:
    return struct.unpack("<f", struct.pack("<I", bits))[0]


def host_plan(plan, images, target) -> HostPlan:
    """The host's data for `plan` built into `images` for `target` (bobc.targets.Target)."""
    manifest = images.manifest
    buffers = tuple(HostBuffer(b["name"], b["gpu"], b["size"], IMAGE_OF_SECTION.get(b["name"]) if b["section"] else None)
                    for b in generate._buffers(plan, images))
    steps = tuple(HostStep(OP_NAMES[s.op], FILE_NAMES.get(s.file), s.a, s.b, s.c, s.d)
                  for s in generate._steps(plan, manifest))
    pointers = generate._adamw_pointers(plan)
    hyper = generate._hyperparameters(plan)
    prologue = manifest["prologue"]["gpfifo_entry"]
    return HostPlan(
        target=target.name, buffers=buffers,
        residents=tuple(Resident(r.name, r.address, r.size) for r in plan.arena.globals),
        steps=steps,
        semaphores=tuple(s["semaphore_address"] for s in manifest["submissions"]),
        semaphore_payload=manifest["semaphore"]["payload"],
        parameter_blocks=tuple(launch["parameter_address"] for launch in manifest["launches"]),
        parameter_base=target.parameter_base,
        prologue_entry=struct.pack("<2I", *prologue),
        adamw_pointers=(pointers["parameters"], pointers["gradients"], pointers["first_moments"],
                        pointers["second_moments"]),
        hyper=Hyperparameters(*(_float(hyper[k]) for k in ("lr", "beta1", "beta2", "eps", "weight_decay"))),
        parameter_count=plan.checkpoint.chunk_bytes // 4,
        contract=plan.checkpoint,
        launch_names={launch["qmd_address"]: f"launch {launch['index']} ({launch['identity']})"
                      for launch in manifest["launches"]})
