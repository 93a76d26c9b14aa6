"""The one module that reads the host plan: what the native host would do, as plain data.

The generated host (bobc.host.generate + runtime_c/plan_host.c) is data: the
typed host plan's buffers sized for the target's images, the ring's
semaphores, the plan's fills with the GPU address each is written at, the
record checks, the fresh state, and the step list both hosts carry out
(bobc.plan.schedule.lower: repeats unrolled, scalar fills placed before the
submissions that read them).  This adapter takes exactly that data from the
same functions the host generator uses, so the simulator carries out the
schedule the C host would; when the plan's host description changes shape,
only this module (and the step handlers in invocation.py) change.
"""
from __future__ import annotations

import dataclasses

import struct
from dataclasses import dataclass

from ..errors import shown_plan_text
from ..host import generate
from ..plan.host import ENCODINGS, SCALAR_OP_CODES, STEP_KIND
from ..plan.schedule import ScheduleError, lower
from ..reference.host import fresh_payload
from .channel import manifest_code_bytes
from .faults import Unmodeled
from .memory import Resident

# generate.BUFFER_SECTIONS: plan buffer -> the image embedded for it (an Images attribute)
SCALAR_OPS = {code: name for name, code in SCALAR_OP_CODES.items()}
# generate._fills' C enum names -> bobc.plan.host's encodings
FILL_ENCODINGS = {"BOBC_ENCODE_" + name.upper(): name for name in ENCODINGS.values()}


@dataclass(frozen=True)
class HostBuffer:
    name: str
    address: int
    size: int
    image: str | None          # which image fills it: program, qmd, push, gpfifo


@dataclass(frozen=True)
class HostStep:
    """One step of the lowered list: its kind's name (bobc.plan.host.STEP_KINDS), its fields."""

    kind: str
    values: dict
    note: str


@dataclass(frozen=True)
class HostFill:
    """A plan fill as the C host holds it (bobc_fill): GPU address, step offset, encoding and
    its scalar program in postfix ((operation name, constant) per term)."""

    va: int
    step: int
    encoding: str             # binary32 or word32
    terms: tuple[tuple[str, float], ...]
    note: str


@dataclass(frozen=True)
class HostPlan:
    target: str
    identity: str
    buffers: tuple[HostBuffer, ...]
    residents: tuple[Resident, ...]
    steps: tuple[HostStep, ...]
    fills: tuple[HostFill, ...]
    semaphores: tuple[int, ...]           # per ring image entry (submission)
    semaphore_payload: int
    prologue_entry: bytes
    record_bytes: int
    input_checks: tuple                   # bobc.plan.host.RecordCheck, checked in order
    fresh_payload: bytes                  # the initializers' state: a request without a checkpoint
    contract: object                      # bobc.plan.model.CheckpointContract
    launch_names: dict                    # QMD address -> "launch i (identity)", for messages
    code_bytes: dict                      # QMD address -> its region's code size (bobc.sim.channel.Channel)
    # QMD address -> the byte ranges its launch's kernel contract lets it read and write
    # (bobc.certify.footprints; None: unknown), which the simulator holds every access to
    footprints: dict = dataclasses.field(default_factory=dict)
    # QMD address -> the GPU addresses of the tensor maps its launch's kernel contract declares
    # (`//@ tensormap` words, as bobc filled them): the only maps its TMA copies may name
    tensor_maps: dict = dataclasses.field(default_factory=dict)


def host_plan(plan, images, target, folders=None) -> HostPlan:
    """The host's data for `plan` built into `images` for `target` (bobc.targets.Target).
    With `folders` (the plan's search path), each launch's contract footprint too."""
    if plan.host is None:
        raise Unmodeled("the plan declares no native host (NvidiaPlanHost): there is no schedule to carry out")
    manifest = images.manifest
    buffers = tuple(HostBuffer(b["name"], b["gpu"], b["size"], generate.BUFFER_SECTIONS.get(b["name"]))
                    for b in generate._buffers(plan, images))
    try:
        lowered = lower(plan)
    except ScheduleError as error:
        raise Unmodeled(f"the simulator cannot carry out this schedule: {error.message}") from None
    steps = tuple(HostStep(s.name, dict(s.values), s.note) for s in lowered)
    fills = tuple(HostFill(f["va"], f["step"], FILL_ENCODINGS[f["encoding"]],
                           tuple((SCALAR_OPS[op], value) for op, value in f["terms"]), f["note"])
                  for f in generate._fills(plan, manifest, target))
    return HostPlan(
        target=target.name, identity=plan.host.identity, buffers=buffers,
        residents=tuple(Resident(r.name, r.address, r.size) for r in plan.arena.globals),
        steps=steps, fills=fills,
        semaphores=tuple(s["semaphore_address"] for s in manifest["submissions"]),
        semaphore_payload=manifest["semaphore"]["payload"],
        prologue_entry=struct.pack("<2I", *manifest["prologue"]["gpfifo_entry"]),
        record_bytes=plan.host.request.input_record_bytes,
        input_checks=tuple(plan.host.request.input_checks),
        fresh_payload=fresh_payload(plan),
        contract=plan.checkpoint,
        launch_names={launch["qmd_address"]: f"launch {launch['index']} ({shown_plan_text(launch['identity'])})"
                      for launch in manifest["launches"]},
        code_bytes=manifest_code_bytes(manifest),
        footprints=_footprints(plan, manifest, target, folders) if folders is not None else {},
        tensor_maps=_tensor_maps(images, target))


def _footprints(plan, manifest, target, folders) -> dict:
    """QMD address -> the launch's footprint by its kernel's contract, read with the arena (so a
    `resident` extent is known): what the certifier holds the plan to, now held against the code."""
    from ..certify.footprints import launch_footprints, program_conflicts

    contracts = program_conflicts(plan.program, target, folders).contracts
    prints = launch_footprints(plan, contracts)
    return {launch["qmd_address"]: prints[launch["index"]] for launch in manifest["launches"]
            if launch["index"] < len(prints)}


def _tensor_maps(images, target) -> dict:
    """QMD address -> the addresses its launch's `//@ tensormap` words hold (the manifest's
    tensor_maps users; each address read from the launch's parameter block in the program image,
    as the GPU reads it, so a program residence's relocation is in it); empty for a launch whose
    contract declares none."""
    manifest = images.manifest
    words: dict[int, list[int]] = {}
    for mapped in manifest.get("tensor_maps", ()):
        for user in mapped["users"]:
            words.setdefault(user["launch"], []).append(user["argument"])
    out = {}
    for launch in manifest["launches"]:
        block = launch["parameter_offset"] + target.parameter_base
        out[launch["qmd_address"]] = frozenset(
            struct.unpack_from("<Q", images.program, block + 8 * argument)[0]
            for argument in words.get(launch["index"], ()))
    return out


def constructor_of(kind_name: str) -> str:
    """The PlanHost.bob constructor a step kind comes from, for messages."""
    kind = STEP_KIND.get(kind_name)
    return kind.constructor if kind is not None and kind.constructor else "emitted by the generator"
