"""The extracted plan: plain, immutable data that the backend consumes.

This is the contract between the language side (plan.extract builds these
from evaluated values) and everything downstream (certify, nvidia, host,
reference).  Nothing here knows a language term or a QMD bit.

Addresses are GPU virtual addresses as the plan declares them; sizes are
bytes.  Field names follow the specs' families (Hardware.Nvidia.SM86.Command.
WholeProgramPlan, Runtime.ArenaCertificate, Runtime.DeviceArenaCertificate).
"""
from __future__ import annotations

from dataclasses import dataclass, field

from ..errors import Span, shown_plan_text
from .host import HostPlan


def _at():
    """Where a value was written (bobc.language.values.origin), for the certifier's messages:
    kept out of equality, hashing and repr (two plans that differ only in where their values
    were written are the same plan)."""
    return field(default=None, compare=False, repr=False)


def place(thing, *names: str) -> Span | None:
    """Where `thing` (a Region, Resident, WholeProgramPlan, ...) has the first of its fields
    `names` written, else the thing itself; None where nothing says."""
    at = getattr(thing, "at", None)
    if not at:
        return None
    for name in (*names, ""):
        found = at.get(name)
        if found is not None:
            return found
    return None


@dataclass(frozen=True)
class Region:
    """A device kernel: its machine code and the resources it declares."""

    identity: str          # the kernel's name, as the plan declares it (its `<identity>.sass`)
    code: bytes            # encoded for the build's target
    registers: int         # the register budget the region declares
    block_x: int           # threads per block (x); y and z come from the launch
    shared_bytes: int      # shared memory per block (its launches' QMD SHARED_MEMORY_SIZE)
    place: int             # offset from the program base the plan computed
    # field name ("" the region itself) -> where it was written
    at: dict[str, Span] | None = _at()


@dataclass(frozen=True)
class ParameterPatch:
    """One 64-bit word of a launch's constant bank 0 image.

    `word` counts 8-byte words from the start of the bank as the plan declares it,
    for the target its architecture and compute class name (its parameter base:
    bobc.targets); the backend relocates words at or past that base to the build
    target's base.
    """

    word: int
    value: int
    at: Span | None = _at()             # where the patch was written


@dataclass(frozen=True)
class Launch:
    """One kernel launch: which region, its grid, its parameter block."""

    identity: str                       # the region's identity (also its phase)
    region: int                         # index into Plan.regions
    program_address: int                # as the plan computed it: program base + place
    grid: tuple[int, int, int]
    block: tuple[int, int, int]         # x from the region, y and z from the launch
    parameter_bytes: int                # the plan's block size (sm_86 layout)
    patches: tuple[ParameterPatch, ...]
    # blocks a thread-block cluster (x, y, z), each dividing the grid's; (1, 1, 1): none.
    # A target without clusters runs the blocks independently (Target.clusters).
    cluster: tuple[int, int, int] = (1, 1, 1)
    at: Span | None = _at()             # where the launch (its schedule's node) was written


SHOWN_REGIONS = 8      # regions a refusal lists by name; past them, the nearest (docs/limits.md)


def regions_near(placed, value: int) -> str:
    """The regions a refusal of an address `value` that is no region's names: `placed` is
    (address, identity) per region, in the plan's order.  Up to SHOWN_REGIONS, every one as
    `identity at 0x..`; past them the nearest below and above `value` and how many there are, so
    that one refusal is one short line whatever the plan's size."""
    placed = list(placed)
    if len(placed) <= SHOWN_REGIONS:
        return ", ".join(f"{shown_plan_text(identity)} at {address:#x}" for address, identity in placed)
    below = max(((a, i) for i, (a, _) in enumerate(placed) if a < value), default=None)
    above = min(((a, i) for i, (a, _) in enumerate(placed) if a > value), default=None)
    near = [f"{placed[i][1]} at {a:#x} {where}" for where, found in (("below", below), ("above", above))
            if found is not None for a, i in (found,)]
    return f"{len(placed):,} regions; the nearest: {', '.join(near)}"


def cluster_tiles(grid: tuple[int, int, int], cluster: tuple[int, int, int]) -> bool:
    """Whether clusters of `cluster` blocks tile `grid`: each dimension positive and dividing
    the grid's (the one rule the certifier, the encoder and the simulator all hold a launch to)."""
    return min(cluster) >= 1 and not any(g % c for g, c in zip(grid, cluster))


@dataclass(frozen=True)
class Submission:
    """A batch submitted as one GPFIFO entry, released on one semaphore."""

    identity: str
    launches: tuple[int, ...]           # indices into Plan.launches, in order
    semaphore_offset: int               # bytes from the semaphore base
    # from a Repeat of semaphore stride 0: its submissions count on one semaphore (a native
    # program issues them again and again and waits for the count): bobc.nvidia.encode
    counts: bool = False
    at: Span | None = _at()             # where its batch was written


@dataclass(frozen=True)
class WholeProgramPlan:
    """NvidiaWholeProgramPlanValue, flattened."""

    component: str                      # which image the encode asked for
    architecture: int
    compute_class: int
    spa_version: int
    program_base: int
    qmd_base: int
    pushbuffer_base: int
    semaphore_base: int
    region_alignment: int
    program_bytes: int                  # as the plan computed it (sm_86 layout)
    regions: tuple[Region, ...]
    launches: tuple[Launch, ...]
    launch_count: int
    qmd_table_bytes: int
    submissions: tuple[Submission, ...]
    submission_count: int
    gpfifo_entries: int
    at: dict[str, Span] | None = _at()  # field name -> where it was written


@dataclass(frozen=True)
class Resident:
    """ArenaResidentValue: a named byte range of the device arena."""

    name: str
    address: int
    size: int
    alignment: int
    at: dict[str, Span] | None = _at()  # field name ("" the resident itself) -> where it was written


@dataclass(frozen=True)
class Phase:
    """DeviceArenaPhaseValue: a launch identity and what it may read/write.

    Empty `reads`/`writes` mean the phase may touch every global resident.
    """

    identity: str
    reads: tuple[Resident, ...] = ()
    writes: tuple[Resident, ...] = ()


@dataclass(frozen=True)
class DeviceArena:
    windows: tuple[Resident, ...]
    globals: tuple[Resident, ...]
    phases: tuple[Phase, ...]


@dataclass(frozen=True)
class CheckpointContract:
    """CheckpointEnvelopeContractValue: what a checkpoint must declare to be accepted (a plan
    host's, and a native request's: bobc.native.request.Request.contract)."""

    schema: bytes
    learner: bytes
    data: bytes
    seed: bytes
    payload_bytes: int
    chunk_bytes: int
    updates_per_invocation: int

    @property
    def chunk_count(self) -> int:
        """The envelope's chunk count: whole chunks of the payload."""
        return self.payload_bytes // self.chunk_bytes


@dataclass(frozen=True)
class HostBuffer:
    """A host-mapped buffer the native host allocates (program, QMD table, ...)."""

    name: str
    gpu_address: int
    size: int


@dataclass(frozen=True)
class Plan:
    """Everything a build needs, extracted once from the evaluated modules."""

    program: WholeProgramPlan
    arena: DeviceArena
    checkpoint: CheckpointContract | None = None
    host_buffers: tuple[HostBuffer, ...] = ()
    host: HostPlan | None = None        # the native host's typed plan (bobc.plan.host)
    # the native host definition the plan was extracted from: (its name, its place), where the
    # certifier locates a fault whose values do not say where they were written
    entry: tuple[str, Span | None] | None = _at()
