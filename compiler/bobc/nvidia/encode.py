"""The whole-program encoder: a WholeProgramPlan -> program, QMD, pushbuffer, GPFIFO images.

What the plan fixes: the regions (code and declared resources), the launches
(region, grid, parameter patches) and the submissions (which launches, which
semaphore).  What this module decides, once, for every plan:

- Code placement.  The plan's region places are keys only: the launches that
  name a region are matched to it by program address, unused regions are
  pruned, and the survivors are repacked in declared order from the program
  base at the plan's alignment.  The manifest records old and new places.
- Parameter blocks (constant bank 0 images), one per launch after the code,
  each `target.parameter_block_bytes`, 256-aligned.  The plan writes bank 0 as
  sm_86 reads it (parameters from 0x160 = word 44); on a target whose
  parameters start elsewhere every word from word 44 on moves by the
  difference.  The words the CUDA driver fills are filled as it does.
- Tensor maps (docs/tensor-maps.md), after the parameter blocks: for each launch whose
  kernel's contract declares `//@ tensormap W of P ...` (bobc.certify.kernels.TensorMap)
  and makes the kernel read it, the 128-byte map of the tensor at the launch's word P,
  encoded as the CUDA driver does (tensor_map.encode_tiled), in one slot of a table
  (identical maps share one, in launch then declaration order); argument W of the
  launch's parameter block holds the slot's GPU address (0 when the map is inactive).
  W is an argument index like P: on a target whose parameters start elsewhere it moves
  with them.  The plan may not patch W.
- Each QMD's shared-memory carve-out, from the target's SM resources: the
  least step at which shared memory does not limit how many of the launch's
  blocks reside together (shared_carveout).
- With a program residence (bobc.nvidia.residence), where the device reads the program table:
  a video copy that every submission's stage refreshes first; the QMDs and tensor map words
  point into it, the stage's own QMD, bank 0 and code follow the pushbuffer's segments.
- One QMD per launch from the layout's recipe below; one pushbuffer segment
  and one GPFIFO entry per submission, released on a host semaphore; a
  prologue segment the host submits once before the first submission.
  A counting submission (from a Repeat of semaphore stride 0: a native
  program issues its entry again and again and waits until the semaphore
  reaches its issue count) instead starts with the prologue's methods and
  adds 1 to its semaphore (a 64-bit unsigned reduction), so any entry may be
  the first issued and the n-th issue leaves the semaphore at n.
"""
from __future__ import annotations

import json
import struct
from dataclasses import dataclass, field
from pathlib import Path

from ..errors import BobcError
from ..plan.model import Launch, Region, WholeProgramPlan, cluster_tiles, regions_near
from ..plan.model import place as written_place
from ..targets import TARGETS, Target, declared_target
from . import pushbuffer as pb
from .gpfifo import Entry
from .launch_order import LaunchOrder, launch_order
from . import residence
from .qmd import QMD, layout_named
from .residence import Residence
from .tensor_map import ALIGNMENT as TENSOR_MAP_ALIGNMENT, SIZE as TENSOR_MAP_BYTES, TiledTensor, encode_tiled

# ---------------------------------------------------------------- constants

QMD_ALIGNMENT = 256             # SEND_PCAS_A takes the QMD address >> 8
PARAMETER_ALIGNMENT = 256       # a parameter block starts on a 256-byte boundary
INSTRUCTION_BYTES = 16

# Windows the prologue sets and bank 0 repeats at 0x18/0x20, and the initial
# stack pointer the driver puts at 0x28.  Measured on the H200 (driver 580,
# runtime_c/tests/device-logs/README.md, run 3): HOPPER_COMPUTE_A refuses a
# window whose low 32 bits are not zero (Xid 69 on SHARED_MEMORY_WINDOW_B for
# 0xfe000000), and a launch with no windows fails SKEDCHECK17_MEMORY_WINDOW_
# OVERLAP (Xid 13); these two ran.  Plans keep their buffers out of them (the
# shim also reserves [0xfc_0000_0000, 0xfe_0000_0000) for its own objects).
SHARED_MEMORY_WINDOW = 0xFE_0000_0000
LOCAL_MEMORY_WINDOW = 0xFF_0000_0000
# GPU virtual ranges no plan buffer may use: the driver shim's own objects
# (runtime_c/nv_shim.h RT_GPU_RESERVED_LO/HI) and the two windows above
# (4 GiB each, their low 32 bits zero).
RESERVED_GPU_RANGES = (
    ("the driver shim's own objects", 0xFC_0000_0000, 0xFE_0000_0000),
    ("the shared-memory window", SHARED_MEMORY_WINDOW, SHARED_MEMORY_WINDOW + (1 << 32)),
    ("the local-memory window", LOCAL_MEMORY_WINDOW, LOCAL_MEMORY_WINDOW + (1 << 32)),
)
STACK_POINTER = 0xFFFDC0
# Our kernels use no local memory: no backing store (base 0, size 0; a stray
# local access faults instead of scribbling), every SM allowed (MAX_SM_COUNT
# 0xff as tinygrad writes it) so the zero size never throttles a launch.
LOCAL_MEMORY_BASE = 0
LOCAL_MEMORY_SIZE = 0
LOCAL_MEMORY_MAX_SM_COUNT = 0xFF

HOST_SUBCHANNEL = 0             # host methods (< 0x100) are the channel's on any subchannel
COMPUTE_SUBCHANNEL = 1          # tinygrad's and NVK's convention

# SEND_SIGNALING_PCAS2_B action: INVALIDATE_COPY_SCHEDULE (3), as NVK writes
# it.  The same QMDs are sent again (the second predictions reuse launches
# 1..6, and every invocation resends all of them), so the scheduler must drop
# any copy it cached and read the QMD from memory before scheduling it.
PCAS_ACTION = "INVALIDATE_COPY_SCHEDULE"

# DEPENDENT_QMD0_ACTION values (open-gpu-doc clc7c0qmd.h V03_00, clcbc0qmd.h V04_00: the same
# numbers).  A launch that always hands on to the same next launch names it in its QMD, and the
# compute work distributor schedules that QMD when the grid has ended (plan_launch_order below).
# The dependent QMD is read again from memory for the reason PCAS_ACTION gives.
DEPENDENT_QMD_ACTIONS = {"SCHEDULE": 1, "INVALIDATE_COPY_SCHEDULE": 3}
DEPENDENT_QMD_ACTION = "INVALIDATE_COPY_SCHEDULE"

SEMAPHORE_PAYLOAD = 1
SEMAPHORE_BYTES = 16            # 64-bit payload, then the 64-bit timestamp
SEMAPHORE_EXECUTE = (pb.SEM_EXECUTE_RELEASE | pb.SEM_EXECUTE_RELEASE_WFI
                     | pb.SEM_EXECUTE_PAYLOAD_SIZE_64BIT | pb.SEM_EXECUTE_RELEASE_TIMESTAMP)
# a counting submission's semaphore: + SEMAPHORE_PAYLOAD, 64-bit unsigned, once the engine is idle
SEMAPHORE_COUNT = (pb.SEM_EXECUTE_REDUCTION | pb.SEM_EXECUTE_REDUCTION_IADD | pb.SEM_EXECUTE_REDUCTION_UNSIGNED
                   | pb.SEM_EXECUTE_RELEASE_WFI | pb.SEM_EXECUTE_PAYLOAD_SIZE_64BIT)


@dataclass(frozen=True)
class QMDRecipe:
    """Which fields of one QMD layout carry which launch fact, and the constants.

    V03_00's constants are those tinygrad writes on Ampere; V04_00's the exact
    set that ran on the H200 (facts doc, top and section 3), except the QMD's
    own release semaphore: our completion signal is the pushbuffer's host
    semaphore release after each submission.
    """

    constants: dict[str, int]
    grid: tuple[str, str, str]
    block: tuple[str, str, str]
    registers: str
    program_address: tuple[str, str]
    prefetch: tuple[str, str, str]          # address >> 8 lower, upper; size in 256-byte units
    cb0_address: tuple[str, str]
    cb0_address_shift: int
    cb0_size_shifted4: str
    shared_memory_size: str
    sm_config: tuple[str, str, str]         # MIN, MAX, TARGET
    barrier_count: str                      # the named barriers a block gets (qmd_barriers)
    dependents: tuple[tuple[str, str, str, str], ...]   # per dependent QMD slot: ENABLE, ACTION, PREFETCH,
                                                        # POINTER (QMD address >> 8)
    dependent_prefetch: DependentPrefetch | None = None
    programmatic: ProgrammaticLaunch | None = None
    cluster: ClusterLaunch | None = None     # None: the layout launches no clusters (blocks run alone)


@dataclass(frozen=True)
class ProgrammaticLaunch:
    """How a QMD has its one dependent started before its own grid has fully ended, and how that
    dependent waits for it (programmatic dependent launch).

    What libcuda writes for a CUDA graph's programmatic edges on the H200 (bench/results/
    programmatic-launch-h200.md): the parent enables PREEXIT and arrives at a latch once its grid
    has ended and its writes are flushed; the dependent waits on that latch, and its L1 data
    caches are dropped when it acquires it.  The dependent's kernel must open with ACQBULK, which
    holds its blocks until then (Target.launch_prologue): the latch alone does not order the data.
    bobc's kernels never execute PREEXIT, so a grid's dependent starts when the grid's last block
    has exited -- its blocks are placed, and fetch their code and bank 0, while the membar flushes
    the parent's writes -- not while the parent still runs, which measured slower (most likely
    its blocks, placed on the SMs the parent left free, ran several to an SM; the results file
    above).  Each edge has a latch of its own, as libcuda's do (programmatic_latches)."""

    pre_exit: str                           # ENABLE_PROGRAM_PRE_EXIT
    arrive: tuple[str, str]                 # VALID, ID
    wait: tuple[str, str]                   # VALID, ID
    acquire_invalidates: tuple[str, ...]    # the caches dropped when the dependent acquires the latch


@dataclass(frozen=True)
class ClusterLaunch:
    """How a QMD launches its grid as thread-block clusters, and the words of bank 0 that
    tell a kernel its cluster.

    What libcuda writes for a kernel of `__cluster_dims__` on the H200 (bench/results/
    cuda-cluster-launch-h200.md, the launch probe's --cluster): QMD_TYPE 3 instead of
    GRID_CTA's 2, the grid counted in clusters, the cluster's shape in blocks, the
    distribution mode, and the TPC mask of the TPCs the chip lacks with its VALID bit.

    The bank 0 words are where ptxas 13's sm_90 code reads PTX's %is_explicit_cluster,
    %cluster_nctaid, %nclusterid and %cluster_nctarank (tests/sim/ptx/cluster_exchange.ptx
    and tools/ptx_corpus/sm90_cluster.ptx's listings).  It reads them in every launch, so
    bobc writes them in every launch of a target with clusters, as PTX defines the
    registers: a launch without clusters is in clusters of one block, not explicit ones.
    The words at 0x150..0x158, from which ptxas derives a block's coordinates within its
    cluster (%cluster_ctaid, %clusterid), are left zero: what the driver writes there is
    not measured; a bobc kernel reads its rank from SR_CgaCtaId."""

    qmd_type: tuple[str, int]                  # QMD_TYPE and its cluster value
    shape: tuple[str, str, str]                # the cluster's width, height, depth in blocks
    constants: dict[str, int]                  # the rest libcuda sets for a cluster
    bank_explicit: int                         # bank 0: 1 for a launch with clusters (u32)
    bank_shape: int                            # bank 0: the cluster's x, y, z (3 u32)
    bank_clusters: int                         # bank 0: clusters along x, y, z (3 u32)
    bank_blocks: int                           # bank 0: blocks a cluster (u32)


@dataclass(frozen=True)
class DependentPrefetch:
    """How a QMD that schedules a dependent has that dependent's code and constant bank 0
    fetched when its own grid ends, so the dependent's grid does not start by fetching them.

    A CUDA graph's node on the H200 does this (bench/results/cuda-launch-probe-h200.md): it
    binds its successor's bank 0 as a constant buffer of its own with PREFETCH_POST and points
    PROGRAM_PREFETCH at the successor's code with PROGRAM_PREFETCH_TYPE PREFETCH_POST
    (open-gpu-doc clcbc0qmd.h).  The QMD's own code is then not prefetched at its launch: its
    parent prefetched it, or it starts a chain.  What it saved on the H200, outputs byte for
    byte the same: bench/results/, the dependent-prefetch measurement."""

    bank_slot: tuple[str, str, str, str, str]   # VALID, PREFETCH, ADDRESS lower, upper (shifted as bank 0's),
                                                # SIZE_SHIFTED4
    bank_prefetch_post: int
    program_type: str
    program_prefetch_post: int


_COMMON_CONSTANTS = {
    "QMD_GROUP_ID": 0x3F,
    "INVALIDATE_TEXTURE_HEADER_CACHE": 1,
    "INVALIDATE_TEXTURE_SAMPLER_CACHE": 1,
    "INVALIDATE_TEXTURE_DATA_CACHE": 1,
    "INVALIDATE_SHADER_DATA_CACHE": 1,
    "API_VISIBLE_CALL_LIMIT": 1,            # NO_CHECK
    "SAMPLER_INDEX": 1,                     # VIA_HEADER_INDEX
    "CWD_MEMBAR_TYPE": 1,                   # L1_SYSMEMBAR
    "CONSTANT_BUFFER_VALID(0)": 1,
    # no CONSTANT_BUFFER_INVALIDATE(0): the host rewrites parameter blocks (per-step fills) only
    # between submissions, and every submission's start drops the constant cache
    # (submission_segment), so a grid keeps the bank 0 its parent prefetched (DependentPrefetch)
    "SHADER_LOCAL_MEMORY_LOW_SIZE": 0,
    "SHADER_LOCAL_MEMORY_HIGH_SIZE": 0,
}

RECIPES: dict[str, QMDRecipe] = {
    "V03_00": QMDRecipe(
        constants={**_COMMON_CONSTANTS, "QMD_MAJOR_VERSION": 3, "QMD_VERSION": 0, "SM_GLOBAL_CACHING_ENABLE": 1},
        grid=("CTA_RASTER_WIDTH", "CTA_RASTER_HEIGHT", "CTA_RASTER_DEPTH"),
        block=("CTA_THREAD_DIMENSION0", "CTA_THREAD_DIMENSION1", "CTA_THREAD_DIMENSION2"),
        registers="REGISTER_COUNT_V",
        program_address=("PROGRAM_ADDRESS_LOWER", "PROGRAM_ADDRESS_UPPER"),
        prefetch=("PROGRAM_PREFETCH_ADDR_LOWER_SHIFTED", "PROGRAM_PREFETCH_ADDR_UPPER_SHIFTED",
                  "PROGRAM_PREFETCH_SIZE"),
        cb0_address=("CONSTANT_BUFFER_ADDR_LOWER(0)", "CONSTANT_BUFFER_ADDR_UPPER(0)"),
        cb0_address_shift=0,
        cb0_size_shifted4="CONSTANT_BUFFER_SIZE_SHIFTED4(0)",
        shared_memory_size="SHARED_MEMORY_SIZE",
        sm_config=("MIN_SM_CONFIG_SHARED_MEM_SIZE", "MAX_SM_CONFIG_SHARED_MEM_SIZE",
                   "TARGET_SM_CONFIG_SHARED_MEM_SIZE"),
        barrier_count="BARRIER_COUNT",
        # V03_00 has DEPENDENT_QMD1_ENABLE/ACTION/PREFETCH but no second pointer (clc7c0qmd.h):
        # one dependent
        dependents=(("DEPENDENT_QMD0_ENABLE", "DEPENDENT_QMD0_ACTION", "DEPENDENT_QMD0_PREFETCH",
                     "DEPENDENT_QMD0_POINTER"),),
    ),
    "V04_00": QMDRecipe(
        constants={**_COMMON_CONSTANTS, "QMD_MAJOR_VERSION": 4, "QMD_MINOR_VERSION": 0, "QMD_TYPE": 2},
        grid=("GRID_WIDTH", "GRID_HEIGHT", "GRID_DEPTH"),
        block=("CTA_THREAD_DIMENSION0", "CTA_THREAD_DIMENSION1", "CTA_THREAD_DIMENSION2"),
        registers="REGISTER_COUNT",
        program_address=("PROGRAM_ADDRESS_LOWER", "PROGRAM_ADDRESS_UPPER"),
        prefetch=("PROGRAM_PREFETCH_ADDR_LOWER_SHIFTED", "PROGRAM_PREFETCH_ADDR_UPPER_SHIFTED",
                  "PROGRAM_PREFETCH_SIZE"),
        cb0_address=("CONSTANT_BUFFER_ADDR_LOWER_SHIFTED6(0)", "CONSTANT_BUFFER_ADDR_UPPER_SHIFTED6(0)"),
        cb0_address_shift=6,
        cb0_size_shifted4="CONSTANT_BUFFER_SIZE_SHIFTED4(0)",
        shared_memory_size="SHARED_MEMORY_SIZE",
        sm_config=("MIN_SM_CONFIG_SHARED_MEM_SIZE", "MAX_SM_CONFIG_SHARED_MEM_SIZE",
                   "TARGET_SM_CONFIG_SHARED_MEM_SIZE"),
        barrier_count="BARRIER_COUNT",
        dependents=(("DEPENDENT_QMD_ENABLE(0)", "DEPENDENT_QMD_ACTION(0)", "DEPENDENT_QMD_PREFETCH(0)",
                     "DEPENDENT_QMD0_POINTER"),
                    ("DEPENDENT_QMD_ENABLE(1)", "DEPENDENT_QMD_ACTION(1)", "DEPENDENT_QMD_PREFETCH(1)",
                     "DEPENDENT_QMD1_POINTER")),
        # constant buffer 5, as libcuda's graph nodes use it; a plan's kernels read bank 0 alone (the assembler
        # refuses any other bank in a launched kernel)
        dependent_prefetch=DependentPrefetch(
            bank_slot=("CONSTANT_BUFFER_VALID(5)", "CONSTANT_BUFFER_PREFETCH(5)",
                       "CONSTANT_BUFFER_ADDR_LOWER_SHIFTED6(5)", "CONSTANT_BUFFER_ADDR_UPPER_SHIFTED6(5)",
                       "CONSTANT_BUFFER_SIZE_SHIFTED4(5)"),
            bank_prefetch_post=2,
            program_type="PROGRAM_PREFETCH_TYPE", program_prefetch_post=1),
        programmatic=ProgrammaticLaunch(
            pre_exit="ENABLE_PROGRAM_PRE_EXIT",
            arrive=("ARRIVE_AT_LATCH_VALID", "ARRIVE_AT_LATCH_ID"),
            wait=("WAIT_ON_LATCH_VALID", "WAIT_ON_LATCH_ID"),
            acquire_invalidates=("LATCH_ACQUIRE_INVALIDATE_SHADER_DATA_CACHE",
                                 "LATCH_ACQUIRE_INVALIDATE_TEXTURE_DATA_CACHE")),
        cluster=ClusterLaunch(
            qmd_type=("QMD_TYPE", 3),
            shape=("GPC_CGA_WIDTH", "GPC_CGA_HEIGHT", "GPC_CGA_DEPTH"),
            # GH100 has 72 TPCs: libcuda disables TPCs 72..127 for a cluster launch
            constants={"CGA_CTA_DISTRIBUTION_MODE": 1, "TPC_DISABLE_MASK_VALID": 1,
                       "TPC_DISABLE_MASK(2)": 0xFFFFFF00, "TPC_DISABLE_MASK(3)": 0xFFFFFFFF},
            bank_explicit=0x140, bank_shape=0x144, bank_clusters=0x15C, bank_blocks=0x188),
    ),
}


def _check_recipes() -> None:
    """Each target's facts and its QMD layout's recipe agree: a target has clusters (Target.clusters)
    exactly where its recipe says how to launch them, and starts dependents early (its
    launch_prologue) exactly where its recipe has the latches (programmatic)."""
    for target in TARGETS.values():
        recipe = RECIPES[target.qmd_layout]
        if target.clusters != (recipe.cluster is not None):
            raise AssertionError(f"{target.name}: Target.clusters is {target.clusters} but the {target.qmd_layout} "
                                 f"recipe {'has' if recipe.cluster else 'has no'} cluster fields")
        if bool(target.launch_prologue) != (recipe.programmatic is not None):
            raise AssertionError(f"{target.name}: its launch_prologue {target.launch_prologue} and the "
                                 f"{target.qmd_layout} recipe's programmatic latches must come together")


_check_recipes()
# V03_00 has the same prefetch fields (CONSTANT_BUFFER_PREFETCH_POST(i), PROGRAM_PREFETCH_TYPE), but
# no Ampere card has measured them: sm_86's QMDs keep prefetching their own code at launch.

MIN_SHARED_MEMORY = 0x400                    # tinygrad's floor (the 1 KiB per CTA sm_80+ reserves)
def qmd_registers(declared: int, target: Target) -> int:
    """REGISTER_COUNT for a region declaring `declared` registers, on `target` (its
    registers_per_thread bound and its SM's allocation unit: bobc.targets).

    NAK and tinygrad write the compiler's count as is (ptxas's count is the
    highest GPR + 1 + the 2 sm_70+ reserves; NAK writes max(4, gprs + 2)); the
    SM allocates in units of 8 per thread anyway, so rounding up to 8 costs no
    occupancy and makes the QMD say what the hardware allocates.
    """
    most, unit = target.limits.registers_per_thread, target.sm_resources.thread_register_unit
    if not 1 <= declared <= most:
        raise BobcError(f"a region declares {declared} registers; the hardware allows 1..{most}")
    return min(most, -(-declared // unit) * unit)


def qmd_barriers(code: bytes, target: Target) -> int:
    """BARRIER_COUNT for a region of machine code `code`: the named barriers its BAR instructions
    use, as ptxas counts them for the cubin's NUM_BARRIERS, from which the CUDA driver sizes a
    block's barriers (the highest barrier number + 1; all 16 for a barrier named by register:
    bobc.sass.cubin.code_barrier_count), and at least 1: what ran on the H200 for kernels with
    BAR 0 or none (tinygrad writes 1 for every kernel)."""
    from ..sass.cubin import code_barrier_count
    return max(1, code_barrier_count(code, target.name))


SHARED_MEMORY_UNIT = 256


def shared_memory_bytes(declared: int) -> int:
    """SHARED_MEMORY_SIZE for a block declaring `declared` bytes: in 256-byte units, at least the
    1 KiB floor (MIN_SHARED_MEMORY).  The carve-out counts the declared bytes and the reserve
    (shared_carveout), not this field plus the reserve."""
    return max(MIN_SHARED_MEMORY, _align(declared, SHARED_MEMORY_UNIT))


def sm_config(kib: int) -> int:
    """A carve-out as the QMD's *_SM_CONFIG_SHARED_MEM_SIZE fields write it: 4 KiB units,
    plus one, as tinygrad and NVK write it (100 KiB as 0x1A; open-gpu-doc's QMD headers give
    the fields' bits only, clc7c0qmd.h and clcbc0qmd.h have no comment on them)."""
    return kib * 1024 // 4096 + 1


@dataclass(frozen=True)
class Carveout:
    """A launch's shared-memory carve-out, in KiB: the QMD's MIN, TARGET and MAX."""

    smallest: int       # the least that holds one block
    chosen: int         # the least at which shared memory leaves as many blocks resident as the rest allows
    largest: int        # the SM's largest
    blocks: int         # blocks resident per SM at `chosen`


def shared_carveout(target: Target, threads: int, registers: int, shared_bytes: int, name: str = "") -> Carveout:
    """The carve-out a launch of blocks of `threads` threads, `registers` registers each
    (as the QMD allocates them) and `shared_bytes` of shared memory asks the SM for.

    `shared_bytes` is what the block declares, not the QMD's SHARED_MEMORY_SIZE: a block takes
    its own bytes (in the field's 256-byte units) plus the 1 KiB the system reserves per
    block, as cuda_occupancy.h's cudaOccMaxBlocksPerSMSmemLimit counts it (sharedSizeBytes +
    reservedSharedMemPerBlock + dynamic): bobc.targets SMResources.block_shared_footprint, which
    on sm_90 counts the reserve once, a declaration there already beginning with it (shared_base).
    The field's 1 KiB floor (shared_memory_bytes) is that reserve, not more: CUDA writes
    SHARED_MEMORY_SIZE 0x400 for a kernel without shared memory and asks TARGET 32 KiB for 32
    resident blocks of it on the H200 (bench/results/cuda-launch-probe-h200-decoded.txt), so
    counting the floor and the reserve both would take two KiB a block and double the carve-out.

    The SM splits one memory between L1 and shared memory in the target's steps.  A
    carve-out too small for the blocks that threads, registers and block slots would let
    reside together runs fewer of them (blocks needing more than half the step run one an
    SM however many their registers would allow); one larger than that only takes L1 away.  So the
    choice is the smallest step at which shared memory is not what limits residency, as
    the CUDA driver's default does.  MIN is the least step that runs at all.  Registers count
    per sub-partition (bobc.targets SMResources.block_registers, resident_by_registers).  `name`:
    the launch, which a refusal names.
    """
    sm = target.sm_resources
    warps = -(-threads // 32)
    counted = sm.block_registers(threads, registers)
    bound = min(sm.threads // (warps * 32), sm.resident_by_registers(threads, registers), sm.blocks)
    footprint = sm.block_shared_footprint(_align(shared_bytes, SHARED_MEMORY_UNIT))

    def resident(kib: int) -> int:
        return min(bound, kib * 1024 // footprint)

    block = (f"{name + ': ' if name else ''}a block of {threads} threads, {registers} registers each and "
             f"{shared_bytes} bytes of shared memory")
    if threads > target.limits.threads_per_block:
        raise BobcError(f"{block} does not fit one {target.name} SM: a block may have at most "
                        f"{target.limits.threads_per_block} threads", hint="launch smaller blocks")
    if counted > target.limits.registers_per_block or bound < 1:
        raise BobcError(f"{block} does not fit one {target.name} SM: its {warps} warps of "
                        f"{sm.warp_registers(registers)} registers, rounded up to a multiple of the SM's "
                        f"{sm.sub_partitions} sub-partitions, take {counted} registers, more than the "
                        f"{target.limits.registers_per_block} registers a block may have",
                        hint="declare fewer registers or launch smaller blocks")
    fitting = [kib for kib in sm.carveouts_kib if resident(kib) >= 1]
    if not fitting:
        raise BobcError(f"{block} does not fit one {target.name} SM: with the {sm.shared_reserved} bytes "
                        f"the system reserves per block it takes {footprint}, more than the SM's "
                        f"{sm.carveouts_kib[-1]} KiB", hint=f"declare at most {sm.block_shared_bytes} bytes "
                                                            f"of shared memory per block")
    chosen = next(kib for kib in fitting if resident(kib) == resident(fitting[-1]))
    return Carveout(smallest=fitting[0], chosen=chosen, largest=sm.carveouts_kib[-1], blocks=resident(chosen))


def _align(value: int, alignment: int) -> int:
    return -(-value // alignment) * alignment


# ---------------------------------------------------------------- layout

@dataclass(frozen=True)
class PlacedRegion:
    index: int
    identity: str
    plan_place: int
    place: int              # offset from the program base
    address: int
    size: int


@dataclass(frozen=True)
class PlacedLaunch:
    index: int
    identity: str
    region: int
    program_address: int
    parameter_offset: int   # from the program base
    parameter_address: int
    qmd_offset: int         # from the QMD base
    qmd_address: int


@dataclass(frozen=True)
class PlacedTensorMap:
    """One slot of the tensor map table: its bytes and the launch words that hold its address."""

    slot: int
    offset: int             # from the program base
    address: int
    tensor: TiledTensor
    data: bytes             # encode_tiled(tensor)
    users: tuple[tuple[int, int], ...]      # (launch, argument W) naming it


@dataclass(frozen=True)
class Layout:
    """Where everything goes, before any byte is written."""

    target: Target
    regions: tuple[PlacedRegion, ...]
    pruned: tuple[str, ...]
    code_bytes: int
    launches: tuple[PlacedLaunch, ...]
    program_bytes: int
    qmd_bytes: int
    semaphore_bytes: int
    tensor_maps: tuple[PlacedTensorMap, ...] = ()
    # launch -> {argument W: the GPU address of its map, or 0 where the map is inactive}
    tensor_map_words: dict[int, dict[int, int]] = field(default_factory=dict)


def _launch_name(index: int, launch: Launch) -> str:
    return f"launch {index} ({launch.identity})"


def plan_layout(plan: WholeProgramPlan, target: Target, contracts=None) -> Layout:
    """Place regions, parameter blocks, tensor maps (the tensormap lines of `contracts`,
    region identity -> bobc.certify.kernels.KernelContract) and QMDs; refuse a plan that does
    not add up."""
    if len(plan.launches) != plan.launch_count:
        raise BobcError(f"the plan declares {plan.launch_count} launches but lists {len(plan.launches)}")
    if len(plan.submissions) != plan.submission_count:
        raise BobcError(f"the plan declares {plan.submission_count} submissions but lists {len(plan.submissions)}")
    if plan.gpfifo_entries < plan.submission_count:
        raise BobcError(f"the plan's GPFIFO has {plan.gpfifo_entries} entries for {plan.submission_count} submissions",
                        written_place(plan, "gpfifo_entries"),
                        hint="give the GPFIFO at least one entry per submission (each has one ring entry)")
    alignment = plan.region_alignment
    if alignment <= 0 or alignment % 128:
        raise BobcError(f"region alignment {alignment} is not a positive multiple of 128 bytes")
    for name, base, need in (("program", plan.program_base, max(alignment, PARAMETER_ALIGNMENT)),
                             ("QMD", plan.qmd_base, QMD_ALIGNMENT), ("pushbuffer", plan.pushbuffer_base, 4),
                             ("semaphore", plan.semaphore_base, SEMAPHORE_BYTES)):
        if base % need:
            raise BobcError(f"the {name} base {base:#x} is not {need}-byte aligned")

    by_address: dict[int, int] = {}
    for index, region in enumerate(plan.regions):
        by_address.setdefault(plan.program_base + region.place, index)
    for index, launch in enumerate(plan.launches):
        name = _launch_name(index, launch)
        if not 0 <= launch.region < len(plan.regions):
            raise BobcError(f"{name} names region {launch.region}; the plan has {len(plan.regions)} regions")
        region = plan.regions[launch.region]
        expected = plan.program_base + region.place
        if launch.program_address != expected:
            other = by_address.get(launch.program_address)
            if other is None:
                places = regions_near([(plan.program_base + r.place, r.identity) for r in plan.regions],
                                      launch.program_address)
                raise BobcError(f"{name}: program address {launch.program_address:#x} matches no region's "
                                f"place (regions: {places})")
            raise BobcError(f"{name} names region {launch.region} ({region.identity}, at {expected:#x}) but its "
                            f"program address {launch.program_address:#x} is region {other}'s "
                            f"({plan.regions[other].identity})")
        if launch.block[0] != region.block_x:
            raise BobcError(f"{name}: block x {launch.block[0]} differs from region {region.identity}'s "
                            f"declared block width {region.block_x}")

    used = {launch.region for launch in plan.launches}
    placed: list[PlacedRegion] = []
    offset = 0
    for index, region in enumerate(plan.regions):
        if index not in used:
            continue
        if not region.code or len(region.code) % INSTRUCTION_BYTES:
            raise BobcError(f"region {region.identity}: {len(region.code)} bytes of code is not a whole, "
                            f"non-empty number of {INSTRUCTION_BYTES}-byte instructions")
        place = _align(offset, alignment)
        placed.append(PlacedRegion(index, region.identity, region.place, place, plan.program_base + place,
                                   len(region.code)))
        offset = place + len(region.code)
    code_bytes = _align(offset, alignment)
    pruned = tuple(r.identity for i, r in enumerate(plan.regions) if i not in used)
    address_of = {p.index: p.address for p in placed}

    block_bytes = target.parameter_block_bytes
    if block_bytes % PARAMETER_ALIGNMENT:
        raise BobcError(f"target {target.name}: parameter blocks of {block_bytes} bytes break the "
                        f"{PARAMETER_ALIGNMENT}-byte alignment")
    if target.qmd_record_bytes % QMD_ALIGNMENT or target.qmd_record_bytes < layout_named(target.qmd_layout).size:
        raise BobcError(f"target {target.name}: a {target.qmd_record_bytes}-byte QMD slot cannot hold "
                        f"a {target.qmd_layout} QMD on a {QMD_ALIGNMENT}-byte boundary")
    first_block = _align(code_bytes, PARAMETER_ALIGNMENT)
    launches = tuple(
        PlacedLaunch(i, launch.identity, launch.region, address_of[launch.region],
                     first_block + i * block_bytes, plan.program_base + first_block + i * block_bytes,
                     i * target.qmd_record_bytes, plan.qmd_base + i * target.qmd_record_bytes)
        for i, launch in enumerate(plan.launches))
    program_bytes = first_block + len(plan.launches) * block_bytes
    qmd_bytes = len(plan.launches) * target.qmd_record_bytes

    # A target that reads the plan's own bank 0 layout must reproduce the
    # plan's arithmetic exactly (sm_86: code extent + launches x 512).
    native = target.parameter_base == plan_parameter_base(plan) and all(
        launch.parameter_bytes == block_bytes for launch in plan.launches)
    if native and program_bytes != plan.program_bytes:
        raise BobcError(f"target {target.name}: the program image is {program_bytes} bytes "
                        f"({code_bytes} of code + {len(plan.launches)} x {block_bytes}) but the plan computed "
                        f"{plan.program_bytes}")
    if native and qmd_bytes != plan.qmd_table_bytes:
        raise BobcError(f"target {target.name}: the QMD table is {qmd_bytes} bytes "
                        f"({len(plan.launches)} x {target.qmd_record_bytes}) but the plan computed "
                        f"{plan.qmd_table_bytes}")

    semaphore_end = 0
    for index, submission in enumerate(plan.submissions):
        for launch in submission.launches:
            if not 0 <= launch < len(plan.launches):
                raise BobcError(f"submission {index} ({submission.identity}) references launch {launch}; "
                                f"the plan has {len(plan.launches)} launches")
        if submission.semaphore_offset % SEMAPHORE_BYTES:
            raise BobcError(f"submission {index} ({submission.identity}): semaphore offset "
                            f"{submission.semaphore_offset:#x} is not {SEMAPHORE_BYTES}-byte aligned "
                            "(a 64-bit payload and its timestamp)")
        semaphore_end = max(semaphore_end, submission.semaphore_offset + SEMAPHORE_BYTES)
    maps, map_words = plan_tensor_maps(plan, target, contracts, program_bytes)
    program_bytes += len(maps) * TENSOR_MAP_BYTES
    return Layout(target, tuple(placed), pruned, code_bytes, launches, program_bytes, qmd_bytes, semaphore_end,
                  maps, map_words)


def plan_tensor_maps(plan: WholeProgramPlan, target: Target, contracts,
                     offset: int) -> tuple[tuple[PlacedTensorMap, ...], dict[int, dict[int, int]]]:
    """The tensor map table from `offset` (past the parameter blocks) and, per launch, the
    address each of its map words gets (the module's docstring).  A map is read from global
    memory at a 64-byte aligned address (CUDA's CUtensorMap is alignas(64); tensor_map.ALIGNMENT,
    docs/tensor-maps.md): slots are 128 bytes from a 256-byte boundary, so each is."""
    if not contracts:
        return (), {}
    if offset % PARAMETER_ALIGNMENT or plan.program_base % PARAMETER_ALIGNMENT:
        raise BobcError(f"the tensor map table at program offset {offset:#x} is not {PARAMETER_ALIGNMENT}-byte "
                        "aligned")                   # plan_layout places the parameter blocks so
    argument_word = plan_parameter_base(plan) // 8
    slots: dict[bytes, int] = {}
    tensors: list[TiledTensor] = []
    users: list[list[tuple[int, int]]] = []
    words: dict[int, dict[int, int]] = {}
    for index, launch in enumerate(plan.launches):
        contract = contracts.get(plan.regions[launch.region].identity)
        if contract is None or not contract.tensor_maps:
            continue
        own = {p.word - argument_word: p.value for p in launch.patches}
        patched = {p.word for p in launch.patches}
        filled = words.setdefault(index, {})
        for declared in contract.tensor_maps:
            word = argument_word + declared.word
            where = (f"{_launch_name(index, launch)}, kernel {contract.kernel}, tensor map word {declared.word} "
                     f"(bank 0 word {word}; {declared.what or 'the map of argument ' + str(declared.pointer)}; "
                     f"declared at {contract.source}:{declared.line})")
            if not target.tensor_maps:
                raise BobcError(f"{where}: target {target.name} has no Tensor Memory Accelerator to read a "
                                f"tensor map", hint="build for a target that has one (sm_90), or give this "
                                                    "target a kernel source without //@ tensormap lines")
            if word in patched:
                raise BobcError(f"{where}: the plan patches this word, which bobc fills with the map's address",
                                hint="leave the word out of the launch's parameter patches")
            if (word + 1) * 8 > launch.parameter_bytes:
                raise BobcError(f"{where}: the word lies past the plan's {launch.parameter_bytes}-byte block")
            active, why = declared.active(own)
            if active is None:
                raise BobcError(f"{where}: {why}")
            if not active:
                filled[declared.word] = 0
                continue
            if declared.pointer not in own:
                raise BobcError(f"{where}: argument {declared.pointer}, the map's base, is not patched")
            tensor, why = declared.tensor(own, own[declared.pointer])
            if tensor is None:
                raise BobcError(f"{where}: {why}")
            data = encode_tiled(tensor, where)           # refused as the driver refuses, by parameter
            if data not in slots:
                slots[data] = len(tensors)
                tensors.append(tensor)
                users.append([])
            slot = slots[data]
            users[slot].append((index, declared.word))
            filled[declared.word] = plan.program_base + offset + slot * TENSOR_MAP_BYTES
    placed = []
    for data, slot in slots.items():
        at = offset + slot * TENSOR_MAP_BYTES
        if (plan.program_base + at) % TENSOR_MAP_ALIGNMENT:
            raise AssertionError(f"tensor map slot {slot} at {plan.program_base + at:#x} is misaligned")
        placed.append(PlacedTensorMap(slot, at, plan.program_base + at, tensors[slot], data, tuple(users[slot])))
    return tuple(sorted(placed, key=lambda m: m.slot)), words


# ---------------------------------------------------------------- images

def plan_parameter_base(plan: WholeProgramPlan) -> int:
    """Where the plan's parameter words start in bank 0: its declared target's parameter base
    (a plan's ParameterPatch words are laid out for the device it declares)."""
    declared = declared_target(plan.architecture, plan.compute_class)
    if declared is None:
        raise BobcError(f"the plan declares architecture {plan.architecture:#x} with compute class "
                        f"{plan.compute_class:#06x}, which names no target bobc knows")
    return declared.parameter_base


def bank_zero(target: Target, grid: tuple[int, int, int], block: tuple[int, int, int],
              cluster: tuple[int, int, int] = (1, 1, 1)) -> bytearray:
    """A parameter block with the words the CUDA driver fills below the parameters (facts doc
    section 5): block x/y/z, grid x/y/z, then the shared and local memory windows and the
    stack pointer, and a cluster launch's words (ClusterLaunch); the parameters themselves zero."""
    out = bytearray(target.parameter_block_bytes)
    struct.pack_into("<3I", out, 0x00, *block)
    struct.pack_into("<3I", out, 0x0C, *grid)
    struct.pack_into("<3Q", out, 0x18, SHARED_MEMORY_WINDOW, LOCAL_MEMORY_WINDOW, STACK_POINTER)
    how = RECIPES[target.qmd_layout].cluster
    if how is not None:          # a target with clusters: a launch without them is in clusters of one block
        struct.pack_into("<I", out, how.bank_explicit, int(tuple(cluster) != (1, 1, 1)))
        struct.pack_into("<3I", out, how.bank_shape, *cluster)
        struct.pack_into("<3I", out, how.bank_clusters, *(g // c for g, c in zip(grid, cluster)))
        struct.pack_into("<I", out, how.bank_blocks, cluster[0] * cluster[1] * cluster[2])
    return out


def _cluster_entry(target: Target, cluster: tuple[int, int, int]) -> dict:
    """A manifest launch's "cluster" (blocks a cluster), only where its QMD launches clusters."""
    return {"cluster": list(cluster)} if clusters_of(target, cluster) is not None else {}


def clusters_of(target: Target, cluster: tuple[int, int, int]) -> ClusterLaunch | None:
    """How `target` launches a grid in clusters of `cluster` blocks; None where it launches the
    blocks alone: no cluster was asked for, or the target has none (the plan's
    NvidiaLaunchKernelClustered: its blocks then run independently)."""
    if tuple(cluster) == (1, 1, 1) or not target.clusters:
        return None
    return RECIPES[target.qmd_layout].cluster


def parameter_block(plan: WholeProgramPlan, index: int, target: Target,
                    tensor_map_words: dict[int, int] | None = None) -> bytes:
    """Launch `index`'s constant bank 0 image for `target`; `tensor_map_words`: argument ->
    the address of its tensor map (Layout.tensor_map_words), written at the target's
    parameter base like the plan's own arguments."""
    launch = plan.launches[index]
    name = _launch_name(index, launch)
    block = bank_zero(target, launch.grid, launch.block, launch.cluster)
    plan_base = plan_parameter_base(plan)
    shift_bytes = target.parameter_base - plan_base
    if shift_bytes % 8 or shift_bytes < 0:
        raise BobcError(f"target {target.name}: parameter base {target.parameter_base:#x} is not a whole "
                        f"number of words past the plan's {plan_base:#x}")
    first_parameter_word = plan_base // 8
    seen: set[int] = set()
    for patch in launch.patches:
        if patch.word in seen:
            raise BobcError(f"{name}: parameter word {patch.word} is patched twice")
        seen.add(patch.word)
        if (patch.word + 1) * 8 > launch.parameter_bytes:
            raise BobcError(f"{name}: parameter word {patch.word} lies past the plan's "
                            f"{launch.parameter_bytes}-byte block")
        if patch.word < first_parameter_word:
            raise BobcError(f"{name}: parameter word {patch.word} (bank 0 offset {patch.word * 8:#x}) lies below "
                            f"the parameters of the device the plan declares ({plan_base:#x}): the words "
                            "there are the launch's own (block, grid, memory windows), which bobc fills")
        offset = patch.word * 8 + shift_bytes
        if offset + 8 > len(block):
            raise BobcError(f"{name}: parameter word {patch.word} lands at bank 0 offset {offset:#x}, past "
                            f"{target.name}'s {len(block)}-byte parameter block")
        if not 0 <= patch.value < 1 << 64:
            raise BobcError(f"{name}: parameter word {patch.word} value {patch.value:#x} is not a 64-bit word")
        struct.pack_into("<Q", block, offset, patch.value)
    for argument, address in sorted((tensor_map_words or {}).items()):
        offset = target.parameter_base + 8 * argument
        if offset + 8 > len(block):
            raise BobcError(f"{name}: tensor map argument {argument} lands at bank 0 offset {offset:#x}, past "
                            f"{target.name}'s {len(block)}-byte parameter block")
        struct.pack_into("<Q", block, offset, address)
    return bytes(block)


# The first latch id (ARRIVE_AT_LATCH_ID / WAIT_ON_LATCH_ID) of a plan's early-start edges:
# libcuda numbers its latches from small ids up, one an edge, past 600 in one process
# (bench/results/programmatic-launch-h200.md).
FIRST_LATCH = 1


def programmatic_latches(plan: WholeProgramPlan, order: LaunchOrder, target: Target) -> dict[int, int]:
    """The launches whose grids start before their parent's has fully ended, each with the latch
    it waits on (ProgrammaticLaunch): a launch that is the only dependent of every QMD that names
    it (a QMD naming two arrives at no latch), that no pushbuffer sends itself (a send would wait
    on a latch no grid arrives at), and whose
    kernel opens with the target's launch prologue (ACQBULK first: it waits before it reads or
    writes anything).  Empty on a target whose QMD has no latches (sm_86's V03_00)."""
    if RECIPES[target.qmd_layout].programmatic is None or not target.launch_prologue:
        return {}
    sent = {send.launch for sends in order.sends for send in sends}
    # a launch may be named by several QMDs (its parent differs between the submissions that
    # send it); one that names it beside another dependent arrives at no latch, so the launch
    # would wait forever where that QMD starts it
    shared = {child for children in order.dependents.values() if len(children) > 1 for child in children}
    opening = _instruction_bits(target.launch_prologue[0], target)
    latches = {}
    for parent in sorted(order.dependents):
        children = order.dependents[parent]
        if len(children) != 1 or children[0] in sent or children[0] in shared:
            continue
        code = plan.regions[plan.launches[children[0]].region].code
        if len(code) >= 16 and _instruction_bits_of(code[:16]) == opening:
            latches[children[0]] = FIRST_LATCH + children[0]
    return latches


def _instruction_bits(text: str, target: Target) -> int:
    from ..sass import assemble
    return _instruction_bits_of(assemble(text, target).code[:16])


def _instruction_bits_of(word: bytes) -> int:
    """An instruction's 128 bits without its control code (stalls, barriers, waits, reuse)."""
    from ..sass.encoder import CONTROL_MASK
    return int.from_bytes(word, "little") & ~CONTROL_MASK


def plan_launch_order(plan: WholeProgramPlan, conflicts=None, slots: int = 1) -> LaunchOrder:
    """Which QMD starts which, and what each submission's pushbuffer sends
    (bobc.nvidia.launch_order); `conflicts(a, b)` says whether launches a and b touch the same
    bytes, one of them writing (bobc.certify.footprints), None: every launch conflicts with
    every other, and each submission is one chain; `slots`: the dependent QMDs a QMD names."""
    return launch_order([submission.launches for submission in plan.submissions], conflicts, slots)


def launch_qmd(plan: WholeProgramPlan, layout: Layout, index: int, dependents: tuple[int, ...] = (),
               home: Residence | None = None, latches: dict[int, int] | None = None) -> bytes:
    """Launch `index`'s QMD, zero-padded to the target's table slot; it schedules each launch of
    `dependents` (at most two, DEPENDENT_QMD0 then 1) once its own grid has ended (its writes
    flushed by the membar).  With a program residence `home` (bobc.nvidia.residence) the program
    and bank 0 are read from the residence's copy of the program table.  `latches`
    (programmatic_latches): the launches started early, each with the latch it waits on."""
    target = layout.target
    launch = plan.launches[index]
    placed = layout.launches[index]
    region: Region = plan.regions[launch.region]
    pointers = []
    for successor in dependents:
        pointer = layout.launches[successor].qmd_address
        if pointer % QMD_ALIGNMENT or pointer >> 40:
            raise BobcError(f"{_launch_name(index, launch)}: the QMD it schedules, at {pointer:#x}, "
                            f"is not {QMD_ALIGNMENT}-byte aligned below 2^40")
        pointers.append(pointer)
    where = home.relocate if home is not None else (lambda address: address)
    following = None
    if dependents:
        first = layout.launches[dependents[0]]
        following = (where(first.program_address), len(plan.regions[plan.launches[dependents[0]].region].code),
                     where(first.parameter_address))
    latches = latches or {}
    arrive = latches.get(dependents[0]) if len(dependents) == 1 else None
    return grid_qmd(target, _launch_name(index, launch), launch.grid, launch.block, region.registers,
                    region.shared_bytes, where(placed.program_address), len(region.code),
                    where(placed.parameter_address), tuple(pointers), following, latches.get(index), arrive,
                    launch.cluster, barriers=qmd_barriers(region.code, target))


def grid_qmd(target: Target, name: str, grid: tuple[int, int, int], block: tuple[int, int, int], registers: int,
             shared_bytes: int, program: int, code_size: int, bank0: int, dependents: tuple[int, ...] = (),
             following: tuple[int, int, int] | None = None, wait_latch: int | None = None,
             arrive_latch: int | None = None, cluster: tuple[int, int, int] = (1, 1, 1), *,
             barriers: int) -> bytes:
    """One grid's QMD for `target`: its code at `program` (`code_size` bytes, prefetched), its
    constant bank 0 at `bank0`, the QMDs at `dependents` scheduled when it ends.  `following`,
    the first dependent's (program, code size, bank 0): where the layout's recipe has a
    DependentPrefetch, those are prefetched when this grid ends instead of this grid's code at
    its launch.  `wait_latch`: the grid is started early by its parent and waits on this latch;
    `arrive_latch`: its one dependent is started early and waits on this one
    (ProgrammaticLaunch).  `cluster`: the blocks of a thread-block cluster, where the target
    has them (ClusterLaunch).  `barriers`: the named barriers a block of the kernel uses
    (qmd_barriers)."""
    recipe = RECIPES[target.qmd_layout]
    qmd = QMD(target.qmd_layout, context=name)
    for field_name, value in recipe.constants.items():
        qmd.set(field_name, value)
    qmd.set("SASS_VERSION", target.sm)
    if min(grid) < 1:
        raise BobcError(f"{name}: grid {grid} has an empty dimension")
    how = clusters_of(target, cluster)
    if how is not None:
        if not cluster_tiles(grid, cluster):
            raise BobcError(f"{name}: clusters of {cluster} blocks do not tile the grid {grid}")
        qmd.set(*how.qmd_type)
        for field_name, value in zip(how.shape, cluster):
            qmd.set(field_name, value)
        for field_name, value in how.constants.items():
            qmd.set(field_name, value)
        grid = tuple(g // c for g, c in zip(grid, cluster))    # the grid counts clusters
    for field_name, value in zip(recipe.grid, grid):
        qmd.set(field_name, value)
    for field_name, value in zip(recipe.block, block):
        if value < 1:
            raise BobcError(f"{name}: block {block} has an empty dimension")
        qmd.set(field_name, value)
    qmd.set(recipe.registers, qmd_registers(registers, target))
    qmd.set(recipe.barrier_count, barriers)
    shared = shared_memory_bytes(shared_bytes)
    qmd.set(recipe.shared_memory_size, shared)
    threads = block[0] * block[1] * block[2]
    carveout = shared_carveout(target, threads, qmd_registers(registers, target), shared_bytes, name)
    low, high, size = recipe.sm_config
    qmd.set(low, sm_config(carveout.smallest)).set(high, sm_config(carveout.largest))
    qmd.set(size, sm_config(carveout.chosen))
    qmd.set(recipe.program_address[0], program & 0xFFFFFFFF).set(recipe.program_address[1], program >> 32)
    _program_prefetch(qmd, recipe, program, code_size)
    if bank0 % (1 << recipe.cb0_address_shift):
        raise BobcError(f"{name}: parameter block {bank0:#x} is not aligned for the QMD")
    shifted = bank0 >> recipe.cb0_address_shift
    qmd.set(recipe.cb0_address[0], shifted & 0xFFFFFFFF).set(recipe.cb0_address[1], shifted >> 32)
    qmd.set(recipe.cb0_size_shifted4, target.parameter_block_bytes >> 4)
    if len(dependents) > len(recipe.dependents):
        raise BobcError(f"{name}: {len(dependents)} dependent QMDs; a QMD names at most {len(recipe.dependents)}")
    for pointer, (enable, action, prefetch, address) in zip(dependents, recipe.dependents):
        qmd.set(enable, 1).set(action, DEPENDENT_QMD_ACTIONS[DEPENDENT_QMD_ACTION]).set(prefetch, 1)
        qmd.set(address, pointer >> 8)
    if following is not None and recipe.dependent_prefetch is not None:
        _prefetch_dependent(qmd, recipe, recipe.dependent_prefetch, target, *following)
    if wait_latch is not None or arrive_latch is not None:
        how = recipe.programmatic
        if how is None:
            raise BobcError(f"{name}: QMD {target.qmd_layout} cannot start a grid before its parent has ended")
        if arrive_latch is not None:
            if len(dependents) != 1:
                raise BobcError(f"{name}: only a QMD with one dependent starts it early ({len(dependents)} here)")
            qmd.set(how.pre_exit, 1).set(how.arrive[0], 1).set(how.arrive[1], arrive_latch)
        if wait_latch is not None:
            qmd.set(how.wait[0], 1).set(how.wait[1], wait_latch)
            for cache_field in how.acquire_invalidates:
                qmd.set(cache_field, 1)
    return qmd.to_bytes(target.qmd_record_bytes)


def _prefetch_dependent(qmd: QMD, recipe: QMDRecipe, how: DependentPrefetch, target: Target,
                        program: int, code_size: int, bank0: int) -> None:
    """Point the QMD's program prefetch and a constant buffer slot at its first dependent's code
    and bank 0, both fetched when this grid ends (DependentPrefetch).  The dependent's own QMD
    refuses a bank 0 the QMD cannot hold."""
    valid, prefetch, lower, upper, size = how.bank_slot
    shifted = bank0 >> recipe.cb0_address_shift
    qmd.set(valid, 1).set(prefetch, how.bank_prefetch_post)
    qmd.set(lower, shifted & 0xFFFFFFFF).set(upper, shifted >> 32).set(size, target.parameter_block_bytes >> 4)
    _program_prefetch(qmd, recipe, program, code_size)
    qmd.set(how.program_type, how.program_prefetch_post)


def _program_prefetch(qmd: QMD, recipe: QMDRecipe, program: int, code_size: int) -> None:
    """The QMD's program prefetch: `code_size` bytes of code at `program`, in 256-byte units."""
    qmd.set(recipe.prefetch[0], (program >> 8) & 0xFFFFFFFF).set(recipe.prefetch[1], program >> 40)
    qmd.set(recipe.prefetch[2], min(-(-(program % 256 + code_size) // 256), 0x1FF))


def prologue(target: Target) -> pb.Pushbuffer:
    """Channel setup, submitted once: bind compute, set the memory windows, flush shader caches."""
    push = pb.Pushbuffer()
    c, sub = pb.COMPUTE, COMPUTE_SUBCHANNEL
    push.inc(sub, pb.HOST["SET_OBJECT"], target.compute_class)
    push.inc(sub, c["SET_SHADER_SHARED_MEMORY_WINDOW_A"], SHARED_MEMORY_WINDOW >> 32, SHARED_MEMORY_WINDOW & 0xFFFFFFFF)
    push.inc(sub, c["SET_SHADER_LOCAL_MEMORY_WINDOW_A"], LOCAL_MEMORY_WINDOW >> 32, LOCAL_MEMORY_WINDOW & 0xFFFFFFFF)
    push.inc(sub, c["SET_SHADER_LOCAL_MEMORY_A"],
             pb.upper_field("SET_SHADER_LOCAL_MEMORY_A", target.compute_class, LOCAL_MEMORY_BASE >> 32,
                            f"the {target.name} prologue's local memory backing at {LOCAL_MEMORY_BASE:#x}"),
             LOCAL_MEMORY_BASE & 0xFFFFFFFF)
    push.inc(sub, c["SET_SHADER_LOCAL_MEMORY_NON_THROTTLED_A"], LOCAL_MEMORY_SIZE >> 32,
             LOCAL_MEMORY_SIZE & 0xFFFFFFFF, LOCAL_MEMORY_MAX_SM_COUNT)
    push.immd(sub, c["INVALIDATE_SHADER_CACHES_NO_WFI"],
              pb.INVALIDATE_INSTRUCTION | pb.INVALIDATE_GLOBAL_DATA | pb.INVALIDATE_CONSTANT)
    return push


def submission_segment(plan: WholeProgramPlan, layout: Layout, index: int,
                       order: LaunchOrder | None = None, stage_qmd: int | None = None) -> pb.Pushbuffer:
    """Send the QMDs that start the submission's chains, then release its semaphore once the
    engine is idle.

    A plan's launches run in order, each seeing the writes of those before it that it
    conflicts with.  A launch another launch's QMD names as a dependent (plan_launch_order) is
    started by the compute work distributor when that grid ends, and the pushbuffer sends
    nothing for it.  The others are sent here; where one must not start while earlier grids
    still run, a WAIT_FOR_IDLE stands before the send (what a Vulkan driver emits for a
    compute-to-compute barrier, NVK among them).  The grid's end flushes its writes
    (CWD_MEMBAR_TYPE L1_SYSMEMBAR) and the next grid's start drops stale L1 lines
    (INVALIDATE_SHADER_DATA_CACHE): the QMD's constants.  The constant cache is dropped once
    at the submission's start (INVALIDATE_SHADER_CACHES_NO_WFI, by the prologue, the stage or
    on its own), not by every QMD.  With a program residence, `stage_qmd` is the address of
    the stage's QMD, which is sent and waited for first (bobc.nvidia.residence).
    """
    if order is None:
        order = plan_launch_order(plan, slots=len(RECIPES[layout.target.qmd_layout].dependents))
    submission = plan.submissions[index]
    push = prologue(layout.target) if submission.counts else pb.Pushbuffer()
    if not submission.launches:
        raise BobcError(f"submission {index} ({submission.identity}) has no launches")
    if stage_qmd is not None:
        residence.stage_methods(push, stage_qmd, COMPUTE_SUBCHANNEL, pb.PCAS_ACTION[PCAS_ACTION])
    elif not submission.counts:
        # what the host wrote into parameter blocks since the last submission: the prologue and
        # the stage drop the constant cache themselves
        push.immd(COMPUTE_SUBCHANNEL, pb.COMPUTE["INVALIDATE_SHADER_CACHES_NO_WFI"], pb.INVALIDATE_CONSTANT)
    for send in order.sends[index]:                # in range: plan_layout checked them
        qmd_address = layout.launches[send.launch].qmd_address
        if send.after_idle:
            push.immd(COMPUTE_SUBCHANNEL, pb.COMPUTE["WAIT_FOR_IDLE"], 0)
        push.inc(COMPUTE_SUBCHANNEL, pb.COMPUTE["SEND_PCAS_A"], qmd_address >> 8)
        push.immd(COMPUTE_SUBCHANNEL, pb.COMPUTE["SEND_SIGNALING_PCAS2_B"], pb.PCAS_ACTION[PCAS_ACTION])
    address = plan.semaphore_base + submission.semaphore_offset
    if address >> 40:
        raise BobcError(f"submission {index} ({submission.identity}): semaphore {address:#x} is not below 2^40")
    push.inc(HOST_SUBCHANNEL, pb.HOST["SEM_ADDR_LO"], address & 0xFFFFFFFF, address >> 32,
             SEMAPHORE_PAYLOAD & 0xFFFFFFFF, SEMAPHORE_PAYLOAD >> 32,
             SEMAPHORE_COUNT if submission.counts else SEMAPHORE_EXECUTE)
    return push


@dataclass
class Images:
    program: bytes
    qmd: bytes
    push: bytes
    gpfifo: bytes
    manifest: dict = field(default_factory=dict)
    # a native host's native program (`bobc build --entry DEF --emit-images`, bobc.native.build):
    # its commands load these images and write into them; None for a plan host's images
    native_program: bytes | None = None


def encode_images(plan: WholeProgramPlan, target: Target, conflicts=None, contracts=None,
                  resident: tuple[int, int] | None = None) -> Images:
    """The device images of `plan` for `target`; `conflicts(a, b)` (bobc.certify.footprints)
    lets launches that touch disjoint bytes run at the same time, None keeps each submission
    one chain (plan_launch_order).  `contracts` (region identity -> KernelContract) gives the
    tensor maps to write; by default those `conflicts` was read from (program_conflicts'
    `.contracts`), so one reading of the kernel sources serves both.  `resident` (base, bytes):
    the program residence the device reads the program table from (bobc.nvidia.residence;
    `conflicts` must then carry the launches' footprints, as program_conflicts' does)."""
    if contracts is None:
        contracts = getattr(conflicts, "contracts", None)
    layout = plan_layout(plan, target, contracts)
    home = None
    if resident is not None:
        home = Residence(plan.program_base, *resident)
        residence.check(plan, layout, home, getattr(conflicts, "footprints", None))
    where = home.relocate if home is not None else (lambda address: address)

    program = bytearray(layout.program_bytes)
    for region in layout.regions:
        program[region.place:region.place + region.size] = plan.regions[region.index].code
    for placed in layout.launches:
        program[placed.parameter_offset:placed.parameter_offset + target.parameter_block_bytes] = \
            parameter_block(plan, placed.index, target,
                            {w: where(a) if a else 0 for w, a in layout.tensor_map_words.get(placed.index, {}).items()})
    for mapped in layout.tensor_maps:
        program[mapped.offset:mapped.offset + TENSOR_MAP_BYTES] = mapped.data

    order = plan_launch_order(plan, conflicts, slots=len(RECIPES[target.qmd_layout].dependents))
    latches = programmatic_latches(plan, order, target)
    qmd = b"".join(launch_qmd(plan, layout, i, order.schedules(i), home, latches) for i in range(len(plan.launches)))

    push = bytearray(prologue(target).to_bytes())
    prologue_bytes = len(push)
    stage = None
    if home is not None:                       # the segments' length does not depend on where the stage lies
        length = prologue_bytes + sum(len(submission_segment(plan, layout, i, order, 0).to_bytes())
                                      for i in range(len(plan.submissions)))
        stage = residence.build_stage(plan, layout, home, _align(length, residence.ALIGNMENT), plan.pushbuffer_base)
    segments = []
    for index in range(len(plan.submissions)):
        segment = submission_segment(plan, layout, index, order, stage.qmd_address if stage else None).to_bytes()
        segments.append((len(push), len(segment)))
        push += segment
    if stage is not None:
        push += bytes(stage.offset - len(push)) + stage.data
    entries = [Entry(plan.pushbuffer_base + offset, length // 4) for offset, length in segments]
    prologue_entry = Entry(plan.pushbuffer_base, prologue_bytes // 4)
    gpfifo = b"".join(entry.to_bytes() for entry in entries)

    manifest = {
        "format": "bobc-images-1",
        "target": target.name,
        "qmd_layout": target.qmd_layout,
        "nvdisasm_arch": target.nvdisasm_arch,
        "compute_class": target.compute_class,
        "plan_compute_class": plan.compute_class,
        "parameter_base": target.parameter_base,
        "plan_parameter_base": plan_parameter_base(plan),
        "bases": {"program": plan.program_base, "qmd": plan.qmd_base,
                  "pushbuffer": plan.pushbuffer_base, "semaphore": plan.semaphore_base},
        "sizes": {"program": len(program), "code": layout.code_bytes, "parameter_block": target.parameter_block_bytes,
                  "qmd": len(qmd), "qmd_record": target.qmd_record_bytes, "pushbuffer": len(push),
                  "gpfifo": len(gpfifo), "semaphore": layout.semaphore_bytes},
        "plan_sizes": {"program": plan.program_bytes, "qmd": plan.qmd_table_bytes},
        "regions": [{"index": r.index, "identity": r.identity, "plan_place": r.plan_place, "place": r.place,
                     "address": r.address, "size": r.size,
                     "registers": plan.regions[r.index].registers,
                     "qmd_registers": qmd_registers(plan.regions[r.index].registers, target),
                     "block_x": plan.regions[r.index].block_x,
                     "shared_bytes": plan.regions[r.index].shared_bytes} for r in layout.regions],
        "pruned_regions": list(layout.pruned),
        "launches": [{"index": p.index, "identity": p.identity, "region": p.region,
                      "program_address": p.program_address,
                      "parameter_offset": p.parameter_offset, "parameter_address": p.parameter_address,
                      "qmd_offset": p.qmd_offset, "qmd_address": p.qmd_address,
                      "grid": list(plan.launches[p.index].grid), "block": list(plan.launches[p.index].block),
                      **_cluster_entry(target, plan.launches[p.index].cluster),
                      "schedules": list(order.schedules(p.index))}
                     for p in layout.launches],
        "submissions": [{"index": i, "identity": s.identity, "launches": list(s.launches), "ring_entry": i,
                         "push_offset": segments[i][0], "push_length": segments[i][1],
                         "push_address": plan.pushbuffer_base + segments[i][0],
                         "semaphore_offset": s.semaphore_offset,
                         "semaphore_address": plan.semaphore_base + s.semaphore_offset}
                        for i, s in enumerate(plan.submissions)],
        "prologue": {"push_offset": 0, "push_length": prologue_bytes, "push_address": plan.pushbuffer_base,
                     "gpfifo_entry": list(prologue_entry.dwords()),
                     "compute_subchannel": COMPUTE_SUBCHANNEL, "host_subchannel": HOST_SUBCHANNEL,
                     "shared_memory_window": SHARED_MEMORY_WINDOW, "local_memory_window": LOCAL_MEMORY_WINDOW,
                     "local_memory_base": LOCAL_MEMORY_BASE, "local_memory_size": LOCAL_MEMORY_SIZE},
        "semaphore": {"payload": SEMAPHORE_PAYLOAD, "bytes": SEMAPHORE_BYTES,
                      "layout": "u64 payload at +0, u64 timestamp at +8", "execute": SEMAPHORE_EXECUTE},
        "pcas_action": PCAS_ACTION,
        "dependent_qmd_action": DEPENDENT_QMD_ACTION,
    }
    if home is not None:           # (absent without one: the images of other plans stay as they were)
        manifest["residence"] = {"base": home.base, "bytes": home.size, "program_bytes": len(program),
                                 "stage": stage.manifest()}
    if layout.tensor_maps:         # (absent without any: the images of other plans stay as they were)
        manifest["tensor_maps"] = [
            {"slot": m.slot, "offset": m.offset, "address": m.address, "bytes": TENSOR_MAP_BYTES,
             "data_type": m.tensor.data_type, "global_address": m.tensor.address, "dims": list(m.tensor.dims),
             "strides": list(m.tensor.strides), "box": list(m.tensor.box), "swizzle": m.tensor.swizzle,
             "users": [{"launch": launch, "argument": argument} for launch, argument in m.users]}
            for m in layout.tensor_maps]
    return Images(bytes(program), qmd, bytes(push), gpfifo, manifest)


IMAGE_FILES = {"program": "program.bin", "qmd": "qmd.bin", "push": "push.bin", "gpfifo": "gpfifo.bin"}
# a native host's program beside its images: the manifest's native_program names it (with its size
# and sha256), so a file of that name left from another build is never read as this one's
NATIVE_PROGRAM_FILE = "native-program.bin"


def manifest_text(manifest: dict) -> str:
    return json.dumps(manifest, sort_keys=True, indent=2) + "\n"


def write_images(images: Images, folder: str | Path) -> Path:
    """Write program.bin, qmd.bin, push.bin, gpfifo.bin and manifest.json into `folder` (and,
    for a native host's images, native-program.bin: its native program, which the manifest's
    `native_program` names with its size and sha256).

    With the host's output rules (reference/safe_io.py): `folder` is created when its parent
    exists (a missing parent, a symlink or a non-folder there is refused); every file is
    checked first (a symlink, folder or device in its place is refused, never written
    through), written to a synced temporary beside it, and the five renamed into place
    together, manifest.json last, only when all were written: a full disk or a refusal
    leaves the files there unchanged.  A refusal is an OutputWriteFailure (exit 8) naming
    the file.  `bobc build` publishes them with its other outputs (stage_images).
    """
    from ..reference.safe_io import OutputSet

    outputs = OutputSet()
    stage_images(images, folder, outputs)
    outputs.publish()
    return Path(folder)


def stage_images(images: Images, folder: str | Path, outputs, recovering=()) -> list:
    """write_images' files added to the publication `outputs` (a reference.safe_io.OutputSet),
    their bytes staged, manifest.json last; the caller publishes them, with its own outputs after
    them in the same publication (`bobc build -o HOST --emit-images DIR --emit-c FILE`: one
    journal, all or nothing).  `folder` is checked (and made when missing: the caller removes it
    again when the publication fails, commands._common.folder_made_for) and a journal a kill left
    naming these files (or `recovering`: the caller's other outputs) is completed first.  Returns
    the files' paths."""
    import os

    from ..reference.safe_io import recover

    name = os.fspath(folder)
    check_image_folder(folder, "--emit-images", create=True)
    contents = {file: getattr(images, attribute) for attribute, file in IMAGE_FILES.items()}
    manifest = images.manifest
    if images.native_program is not None:
        import hashlib

        contents[NATIVE_PROGRAM_FILE] = images.native_program
        manifest = manifest | {"native_program": {"file": NATIVE_PROGRAM_FILE, "bytes": len(images.native_program),
                                                  "sha256": hashlib.sha256(images.native_program).hexdigest()}}
    contents["manifest.json"] = manifest_text(manifest).encode("utf-8")
    paths = [os.path.join(name, file) for file in contents]
    recover([*paths, *recovering])      # a kill between two renames of an earlier write
    for path, data in zip(paths, contents.values()):
        outputs.add(path, "--emit-images")
        outputs.outputs[-1].data = data
    return paths


def check_image_folder(folder: str | Path, option: str = "--emit-images", create: bool = False) -> None:
    """The folder checks of write_images (and `bobc inspect --extract`): `folder` is a folder, not
    a symlink, or it is missing and its parent is a folder (then made when `create`).  `bobc build`
    makes them before the build, as it checks -o, and again when it writes.  A refusal is an
    OutputWriteFailure (exit 8) naming the folder as every message does (safe_io.shown): one
    line, a long path shortened; never a traceback (os.lstat and os.stat in a try: pathlib's
    is_dir and exists raise for a name too long or a parent that cannot be searched)."""
    import os
    import stat

    from ..reference.errors import OutputWriteFailure
    from ..errors import shown

    name = os.fspath(folder)

    def refuse(detail: str):
        raise OutputWriteFailure(shown(name), option, detail,
                                 hint="nothing was written; the files there are unchanged")
    if not name:
        refuse("an empty path")
    try:
        info = os.lstat(name)
    except (FileNotFoundError, NotADirectoryError):     # the parent is judged below, as -o's folder is
        info = None
    except OSError as failure:
        refuse(f"cannot inspect it: {failure.strerror or failure}")
    if info is None:
        # the parent said as an output file's folder is (reference.safe_io OutputSet.add)
        parent = os.fspath(Path(name).parent)
        try:
            parent_info = os.stat(parent)
        except FileNotFoundError:
            refuse(f"its folder {shown(parent)} does not exist; create it first")
        except OSError as failure:
            refuse(f"its folder {shown(parent)} cannot be reached: {failure.strerror or failure}")
        if not stat.S_ISDIR(parent_info.st_mode):
            refuse(f"{shown(parent)} is not a folder")
        if not create:
            return
        try:
            os.mkdir(name)
        except FileExistsError:     # another run made it meanwhile: judged as any folder found
            try:
                info = os.lstat(name)
            except OSError as failure:
                refuse(f"cannot inspect it: {failure.strerror or failure}")
        except OSError as failure:
            refuse(f"cannot create the folder: {failure.strerror or failure}")
    if info is not None and stat.S_ISLNK(info.st_mode):
        refuse("is a symlink; name the folder itself (images are never written through a symlink)")
    if info is not None and not stat.S_ISDIR(info.st_mode):
        refuse(f"is not a folder; {option} names a folder to write the image files into")


def host_buffer_ranges(plan: WholeProgramPlan, target: Target, contracts=None,
                       images: "Images | BobcError | None" = None) -> dict[str, tuple[int, int]]:
    """(GPU address, bytes) of the program (with the tensor maps of `contracts`), QMD table,
    pushbuffer and semaphores this plan needs: those of the images a build writes, whose
    launches are ordered by the footprints of `contracts` (bobc.certify.footprints), since
    launches sent beside a chain lengthen or shorten the pushbuffer (probe s36 encodeonce
    finding 2).  `images`: those images, already encoded (or the BobcError encoding them
    raised), which the certifier's checks share rather than each encoding them again."""
    if isinstance(images, BobcError):
        raise images
    if images is None:
        from ..certify.footprints import contract_conflicts

        images = encode_images(plan, target, contract_conflicts(plan, contracts or {}))
    sizes = images.manifest["sizes"]
    return {"program": (plan.program_base, sizes["program"]), "qmd": (plan.qmd_base, sizes["qmd"]),
            "pushbuffer": (plan.pushbuffer_base, sizes["pushbuffer"]),
            "semaphores": (plan.semaphore_base, sizes["semaphore"])}
