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


import struct
from dataclasses import dataclass

from ..errors import shown_plan_text
from ..host import generate
from ..plan.host import ENCODINGS, SCALAR_OP_CODES, STEP_KIND
from ..plan.schedule import ScheduleError, lower
from ..reference.host import fresh_payload
from .channel import manifest_code_bytes, manifest_shared_bytes
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
    # every launch's kernel contract (bobc.sim.contracts), which the simulator holds each launch to
    contracts: object = None
    # QMD address -> the shared bytes its region gives (bobc.sim.channel.Channel shared_bytes)
    shared_bytes: dict = None


def host_plan(plan, images, target, folders) -> HostPlan:
    """The host's data for `plan` built into `images` for `target` (bobc.targets.Target), with
    the contracts of the kernels its launches run, read from `folders` (the plan's search path:
    pipeline.plan_folders), then specs/ (bobc.sim.contracts.read_contracts: a kernel without one
    is refused by name)."""
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
        code_bytes=manifest_code_bytes(manifest), shared_bytes=manifest_shared_bytes(manifest),
        contracts=launch_contracts(plan, manifest, target, folders))


def launch_contracts(plan, manifest, target, folders):
    """The contracts the simulator holds the plan's launches to: each QMD's kernel named by the
    images' manifest (its launches, and the program residence's stage), `resident` extents and
    rule (b) read with the plan's arena."""
    from ..certify.pointers import ByAddress
    from .contracts import LaunchContracts, read_contracts

    kernels = {launch["qmd_address"]: launch["identity"] for launch in manifest["launches"]}
    stage = manifest.get("residence", {}).get("stage")
    if stage is not None:
        kernels[stage["qmd_address"]] = stage["identity"]
    return LaunchContracts(read_contracts(kernels.values(), target, folders), kernels, target,
                           ByAddress(plan.arena.globals), plan.arena.windows)


def constructor_of(kind_name: str) -> str:
    """The PlanHost.bob constructor a step kind comes from, for messages."""
    kind = STEP_KIND.get(kind_name)
    return kind.constructor if kind is not None and kind.constructor else "emitted by the generator"
