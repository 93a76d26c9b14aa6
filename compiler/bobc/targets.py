"""Build targets as tables of facts, selected once per build and passed down.

Nothing downstream asks "is this sm_90?": it reads the fact it needs from the
Target.  A new target (sm_121 for the GB10, later) is one more row here plus
the per-concern tables its fields name (QMD layout, SASS encoding table).

Sources: ../shared/docs/nvidia-driver-facts.md (class IDs: open-gpu-kernel-
modules g_gpu_class_list.c; parameter bases: ptxas 13 EIATTR_PARAM_CBANK;
memory-descriptor slots: ptxas's `ULDC.64 URn, c[0x0][...]` before LDG/STG);
limits: CUDA Programming Guide, "Compute Capabilities" (8.6, 9.0).

Each fact is declared once, here: the assembler's `param` and
`memory_descriptor` symbols (sass/tables/arch.py), the encoders, the
certifier's limits (certify/limits.py, registers.py), the class names
(nvidia/classes.py) and the host's C row (runtime_c/nv_targets.c, generated
by bobc.host.targets_c; runtime_c/nv_classes.h's defines are checked against
CLASS_NAMES by tests/host/test_target_table.py) all read them from here.
"""
from __future__ import annotations

from dataclasses import dataclass

from .errors import UsageError


@dataclass(frozen=True)
class TargetLimits:
    """What one launch may ask of the device (the certifier's bounds)."""

    register_file: int            # 32-bit registers per SM
    registers_per_thread: int
    registers_per_block: int      # 32-bit registers one block may be allocated (SMResources.block_registers)
    threads_per_block: int
    block_xy: int                 # block x and y
    block_z: int
    grid_x: int
    grid_yz: int                  # grid y and z
    static_shared_bytes: int      # static shared memory (.nv.shared) a cubin may declare, as ptxas bounds it
    cluster_blocks: int = 8       # blocks a thread-block cluster may have (CUDA's portable size)


# 32-bit registers an SM holds, on compute capability 8.x and 9.0 alike (CUDA Programming Guide,
# "Technical Specifications per Compute Capability": 64 K)
SM_REGISTER_FILE = 64 * 1024

# 32-bit registers one thread block may have, on compute capability 8.x and 9.0 alike (CUDA Programming
# Guide, "Technical Specifications per Compute Capability": 64 K; cuda_occupancy.h's regsPerBlock)
BLOCK_REGISTERS = 64 * 1024

# compute capability 8.6 and 9.0 agree on every bound the certifier checks
CC80_PLUS_LIMITS = TargetLimits(register_file=SM_REGISTER_FILE, registers_per_thread=255,
                                registers_per_block=BLOCK_REGISTERS, threads_per_block=1024,
                                block_xy=1024, block_z=64, grid_x=2 ** 31 - 1, grid_yz=65535,
                                static_shared_bytes=48 * 1024)


# threads a warp holds, on every NVIDIA GPU (CUDA Programming Guide, "SIMT Architecture")
WARP_THREADS = 32


@dataclass(frozen=True)
class SMResources:
    """What one SM holds at once: the bounds on how many blocks of a launch are resident
    together (occupancy), from which the encoder picks each launch's shared-memory carve-out."""

    threads: int                  # resident threads per SM
    blocks: int                   # resident blocks per SM
    register_file: int            # 32-bit registers per SM
    register_unit: int            # registers are allocated per warp, in units of this many
    shared_reserved: int          # bytes of shared memory the system reserves per resident block
    carveouts_kib: tuple[int, ...]  # the shared-memory sizes an SM can be configured to, ascending
    # where a block's own shared memory starts in its shared window: the bytes below it are the
    # system's (the reserve of shared_reserved bytes sits there; where it is 0 the reserve lies
    # past the block's own bytes).  ptxas 13.5 -arch=sm_90 places a kernel's first static
    # `.shared` variable at 0x400 (its .nv.shared.<k> is 0x400 bytes larger than the variables,
    # and it writes a .nv.shared.reserved.0 section), dynamic shared memory right after the static,
    # and compiles %reserved_smem_offset_begin / _end to 0 / 0x400; -arch=sm_86 places the variables
    # from 0 and computes %reserved_smem_offset_begin as SR_SMEMSZ less c[0x0][0x114], the window's
    # top (docs/targets.md, "Shared memory the system keeps"; tests/sass/test_shared_base_s41.py).
    # The simulator refuses an access below it; the assembler a `.shared` that leaves no byte above it.
    shared_base: int = 0
    # the SM's sub-partitions (processing blocks): each holds register_file / sub_partitions of the
    # registers, and a block's warps are spread over them (cuda_occupancy.h
    # cudaOccSubPartitionsPerMultiprocessor: 4 on compute capability 7.x, 8.x and 9.x)
    sub_partitions: int = 4

    @property
    def thread_register_unit(self) -> int:
        """A thread's registers are allocated in units of this many (256 a warp: 8 a thread)."""
        return self.register_unit // WARP_THREADS

    def warp_registers(self, registers: int) -> int:
        """The registers one warp of threads of `registers` registers each is allocated: in units
        of register_unit."""
        return -(-registers * WARP_THREADS // self.register_unit) * self.register_unit

    def block_registers(self, threads: int, registers: int) -> int:
        """The registers the GPU's launch check counts for a block of `threads` threads of
        `registers` registers each: a warp's allocation times the block's warps rounded up to a
        multiple of sub_partitions (cuda_occupancy.h cudaOccMaxBlocksPerSMRegsLimit: "Hardware
        verifies if a launch fits the per-CTA register limit ... the warp allocation needs to be
        rounded up to the number of partitions"), so that each sub-partition holds its share of the
        block's warps.  A block whose count is past TargetLimits.registers_per_block is not launched."""
        warps = -(-threads // WARP_THREADS)
        return self.warp_registers(registers) * (-(-warps // self.sub_partitions) * self.sub_partitions)

    def resident_by_registers(self, threads: int, registers: int) -> int:
        """How many blocks of `threads` threads of `registers` registers each the SM's registers hold
        at once: each sub-partition holds whole warps of its own registers (cuda_occupancy.h
        cudaOccMaxBlocksPerSMRegsLimit), so the SM holds that many warps times sub_partitions."""
        warps = -(-threads // WARP_THREADS)
        per_partition = (self.register_file // self.sub_partitions) // self.warp_registers(registers)
        return per_partition * self.sub_partitions // warps

    @property
    def block_own_shared_bytes(self) -> int:
        """The most shared memory of its own one block may have: the largest carve-out less what the
        system reserves per block (CUDA's opt-in maximum per block, sharedMemPerBlockOptin: 99 KiB on
        8.6, 227 KiB on 9.0; the TMA box bound of nvidia/tensor_map.py)."""
        return self.carveouts_kib[-1] * 1024 - self.shared_reserved

    @property
    def block_shared_bytes(self) -> int:
        """The most shared memory one block may declare (a kernel's `.shared`, a region's shared bytes,
        the QMD's SHARED_MEMORY_SIZE): its own bytes (block_own_shared_bytes) and the shared_base bytes
        below them, which on 9.0 are the reserve itself, so it is not counted twice: 99 KiB on 8.6,
        228 KiB on 9.0 (ptxas -arch=sm_90a lays out 227 KiB of variables as a 0x39000-byte
        .nv.shared.<k> and refuses one byte more, "0x38c01 bytes, 0x38c00 max"; libcuda writes
        SHARED_MEMORY_SIZE as the kernel's bytes plus 0x400: bench/results/cuda-launch-probe-h100-shared.md)."""
        return self.block_own_shared_bytes + self.shared_base

    @property
    def block_shared_why(self) -> str:
        """Why block_shared_bytes is what it is, for the refusals that name it."""
        own = (f"the SM's {self.carveouts_kib[-1]} KiB carve-out less the {self.shared_reserved} bytes the "
               f"system reserves per block")
        if not self.shared_base:
            return own
        return (f"{self.block_own_shared_bytes} bytes of the block's own ({own}) after the {self.shared_base:#x} "
                f"bytes of that reserve, which a block's shared memory begins with here")

    def block_shared_footprint(self, declared: int) -> int:
        """The bytes of its SM's carve-out a block declaring `declared` bytes of shared memory (in the
        QMD's allocation units) takes: its own bytes plus the reserve, as cuda_occupancy.h's
        cudaOccMaxBlocksPerSMSmemLimit counts a block (sharedSizeBytes + reservedSharedMemPerBlock +
        dynamic).  Where the reserve lies below shared_base a declaration already holds it, so the
        block takes max(declared, shared_base) + shared_reserved - shared_base: 0x4400 declared on
        9.0 (16 KiB of its own) takes 17 KiB, as on 8.6 16 KiB declared does."""
        return max(declared, self.shared_base) + self.shared_reserved - self.shared_base


# CUDA Programming Guide, "Compute Capabilities" and the Ampere / Hopper tuning guides:
# 8.6 holds 1536 threads and 16 blocks, its shared memory is 0..100 KiB in six steps;
# 9.0 holds 2048 threads and 32 blocks, 0..228 KiB in ten steps; both reserve 1 KiB per block
# (the steps as cuda_occupancy.h's cudaOccAlignUpShmemSizeVoltaPlus rounds a request up to them:
# 0, 8, 16, 32, 64, 100 on 8.6 and those and 132, 164, 196, 228 on 9.x; CUDA 13's header)
CC86_SM = SMResources(threads=1536, blocks=16, register_file=SM_REGISTER_FILE, register_unit=256,
                      shared_reserved=1024, carveouts_kib=(0, 8, 16, 32, 64, 100))
CC90_SM = SMResources(threads=2048, blocks=32, register_file=SM_REGISTER_FILE, register_unit=256,
                      shared_reserved=1024, carveouts_kib=(0, 8, 16, 32, 64, 100, 132, 164, 196, 228),
                      shared_base=0x400)


@dataclass(frozen=True)
class CubinFacts:
    """What ptxas 13 writes differently per arch in a kernel's cubin (sass/cubin.py; sass-facts.md
    "Cubin"; read from ptxas's own cubins of the tests/sass/data corpora)."""

    registers_in_text_info: bool  # .text.<k>'s sh_info bits 24..31 hold the register count
    # .nv.compat (sass/cubin.py NV_COMPAT_SM90): nvdisasm refuses an sm_90 cubin without it
    compat_section: bool
    # .nv.info.<k> records ptxas writes whose meaning is not documented (cubin style "ptxas" only),
    # each (format, attribute, value): format 1 a record without a value, 2 a byte (value), 3 a
    # half word (value), 4 a u32 payload (value); by where ptxas writes them
    after_api_version: tuple[tuple[int, int, int], ...] = ()    # after CUDA_API_VERSION
    after_parameters: tuple[tuple[int, int, int], ...] = ()     # after the last KPARAM_INFO
    attribute_5f: int = 0                                       # attribute 0x5F's half word
    closing: tuple[tuple[int, int, int], ...] = ()              # after MAX_THREADS (and CTA_PER_CLUSTER)
    # p_flags of the program-header segments (PT_PHDR and the PT_LOAD over the headers): ptxas 13.5
    # writes R E (5) on sm_86 and R (4) on sm_90 (readelf -l of its cubins)
    header_segment_flags: int = 5
    # the static shared memory (.nv.shared.<k>) a cubin may declare: False: TargetLimits.static_shared_bytes
    # (ptxas 13.5 -arch=sm_86 and -arch=sm_90: "uses too much shared data (0x10000 bytes, 0xc000 max)");
    # True: the block's whole, SMResources.block_shared_bytes (ptxas -arch=sm_90a: "0x38c00 max" bytes of
    # variables, laid out after the 0x400 reserve: a .nv.shared.<k> of at most 0x39000, and
    # the corpus's pipelined_product has 0xc420; its cubins carry sm_90's e_flags, and bobc's sm_90
    # assembles its listings)
    static_shared_whole_block: bool = False
    # where constant bank 0 holds a parameter block of more than KPARAM_INFO_BLOCK_MAX (4352) bytes,
    # when not at Target.parameter_base (sass/cubin.py cubin_parameter_base): ptxas 13.5
    # -arch=sm_86 writes PARAM_CBANK 0x1a80 (and its code reads c[0x0][0x1a80 + N]) for every
    # block of 4356..32764 bytes, 0x160 up to 4352; -arch=sm_90 keeps 0x210 for all
    # (tests/sass/test_kparam_info_v2.py).  None: the block stays at parameter_base
    large_parameter_base: int | None = None


@dataclass(frozen=True)
class Target:
    name: str                 # as users spell it: sm_86, sm_90
    sm: int                   # 0x86, 0x90 (the hex digits spell the arch): the QMD SASS_VERSION
    spa_version: int          # the SPA (streaming processor array) version a plan declares for it
    nvdisasm_arch: str        # nvdisasm -b
    ptxas_arch: str           # ptxas -arch
    parameter_base: int       # kernel parameters' byte offset in constant bank 0
    parameter_block_bytes: int  # one launch's constant bank 0 image
    memory_descriptor: int    # bank 0 byte offset of the 64-bit global-memory descriptor LDG/STG use
    qmd_layout: str           # key into nvidia.qmd's field tables
    qmd_record_bytes: int     # bytes a QMD occupies in the table (256-aligned slot)
    compute_class: int
    gpfifo_class: int
    copy_class: int
    usermode_class: int
    elf_flags: int            # cubin e_flags ptxas 13 writes for this arch
    builds_plans_for: tuple[str, ...]   # targets whose plans this one can run (see encode.py)
    sm_resources: SMResources     # what one SM holds (the QMD's carve-out is chosen from it)
    cubin: CubinFacts             # what its cubin holds that another target's does not (sass/cubin.py)
    limits: TargetLimits = CC80_PLUS_LIMITS
    usermode_takes_params: bool = False  # its USERMODE class is allocated with parameters (Hopper)
    # it has the Tensor Memory Accelerator, whose copies (UTMALDG / UTMASTG) read the tensor maps
    # the encoder writes (PTX ISA: cp.async.bulk.tensor requires sm_90 or higher)
    tensor_maps: bool = False
    # what a kernel a plan launches opens with, so that the compute work distributor may start
    # its grid before the grid it depends on has ended (programmatic dependent launch, PTX
    # griddepcontrol.wait, sm_90 and later): ACQBULK holds the blocks until that grid has ended
    # and its writes are visible (docs/launch-order.md, "Starting the dependent early")
    launch_prologue: tuple[str, ...] = ()
    # it launches grids in thread-block clusters (sm_90 and later); a target without them runs
    # a plan's clustered launch as blocks alone (plan/model.py NvidiaLaunch.cluster).  The QMD
    # recipe of its layout says how (nvidia/encode.py RECIPES[...].cluster, checked against this)
    clusters: bool = False


# Class IDs by name (open-gpu-kernel-modules g_gpu_class_list.c; runtime_c/nv_classes.h
# defines the same names, which tests/host/test_target_table.py holds to these)
CLASS_NAMES = {
    0xC56F: "AMPERE_CHANNEL_GPFIFO_A", 0xC86F: "HOPPER_CHANNEL_GPFIFO_A",
    0xC7C0: "AMPERE_COMPUTE_B", 0xCBC0: "HOPPER_COMPUTE_A",
    0xC7B5: "AMPERE_DMA_COPY_B", 0xC8B5: "HOPPER_DMA_COPY_A",
    0xC461: "TURING_USERMODE_A", 0xC661: "HOPPER_USERMODE_A",
    0xC6C0: "AMPERE_COMPUTE_A",        # GA100 (no target of ours: named only)
    # the compute classes of GPUs with no target of ours: named so that a host refusing such a
    # GPU says what it found (nouveau include/nvif/class.h, open-gpu-kernel-modules cl*.h)
    0xC9C0: "ADA_COMPUTE_A", 0xCDC0: "BLACKWELL_COMPUTE_A", 0xCEC0: "BLACKWELL_COMPUTE_B",
}

# What GPU a compute class in the RM's class list (NV0080_CTRL_CMD_GPU_GET_CLASSLIST) means: the
# chips whose class list carries it (open-gpu-kernel-modules g_gpu_class_list.c: GA100 lists
# AMPERE_COMPUTE_A alone, GA102..GA107 AMPERE_COMPUTE_B alone; nouveau's GSP-RM glue,
# nvkm/subdev/gsp/rm/{ga100,ga1xx,ad10x,gh100,gb10x,gb20x}.c, gives each chip's one compute
# class) and their compute capability (CUDA Programming Guide, "Compute Capabilities").  A host
# refused at bring-up names the GPU's row, and the target that runs on it when bobc has one
# (runtime_c/nv_targets.c, rendered by bobc.host.targets_c).
COMPUTE_CLASS_GPUS = {
    0xC6C0: ("Ampere GA100 (A100, A30)", "8.0"),
    0xC7C0: ("Ampere GA10x (RTX 30xx, RTX A-series, A10, A40)", "8.6"),
    0xC9C0: ("Ada AD10x (RTX 40xx, L4, L40)", "8.9"),
    0xCBC0: ("Hopper GH100 (H100, H200)", "9.0"),
    0xCDC0: ("Blackwell GB100 (B100, B200)", "10.0"),
    0xCEC0: ("Blackwell GB20x (RTX 50xx, RTX PRO)", "12.0"),
}


SM86 = Target(
    name="sm_86", sm=0x86, spa_version=0x86, nvdisasm_arch="SM86", ptxas_arch="sm_86",
    parameter_base=0x160, parameter_block_bytes=512, memory_descriptor=0x118,
    qmd_layout="V03_00", qmd_record_bytes=256,
    compute_class=0xC7C0, gpfifo_class=0xC56F, copy_class=0xC7B5, usermode_class=0xC461,
    elf_flags=0x6005604, builds_plans_for=("sm_86",), sm_resources=CC86_SM,
    cubin=CubinFacts(registers_in_text_info=True, compat_section=False, after_api_version=((1, 0x35, 0),),
                     large_parameter_base=0x1A80),
)

# sm_90: ptxas's kernels read parameters at 0x210, so a launch's bank 0 image
# must reach past 0x210 + the parameters: 1024 bytes.  A V04_00 QMD is 384
# bytes; SEND_PCAS_A addresses QMDs >> 8, so each takes a 512-byte slot.
SM90 = Target(
    name="sm_90", sm=0x90, spa_version=0x90, nvdisasm_arch="SM90", ptxas_arch="sm_90",
    parameter_base=0x210, parameter_block_bytes=1024, memory_descriptor=0x208,
    qmd_layout="V04_00", qmd_record_bytes=512,
    compute_class=0xCBC0, gpfifo_class=0xC86F, copy_class=0xC8B5, usermode_class=0xC661,
    elf_flags=0x6005A04, usermode_takes_params=True, tensor_maps=True,
    launch_prologue=("ACQBULK",), clusters=True,
    cubin=CubinFacts(registers_in_text_info=False, compat_section=True, after_parameters=((3, 0x50, 0),),
                     attribute_5f=0x0101, closing=((4, 0x36, 8), (3, 0x6B, 1), (2, 0x6D, 0)),
                     header_segment_flags=4, static_shared_whole_block=True),
    # a plan written for sm_86 runs here: the encoder moves its parameter words from
    # 0x160 to 0x210 and widens its parameter blocks and QMD slots
    builds_plans_for=("sm_86", "sm_90"), sm_resources=CC90_SM,
)

TARGETS = {t.name: t for t in (SM86, SM90)}

# the target a command builds for when none is named (commands/_common.py's --target default)
DEFAULT_TARGET = SM90


def declared_target(architecture: int, compute_class: int) -> Target | None:
    """The target a plan names by its declared SASS architecture and compute class."""
    return next((t for t in TARGETS.values() if (t.sm, t.compute_class) == (architecture, compute_class)), None)


class MissingTargetFact(ValueError):
    """A per-concern table has no row for a target: adding a target is one row per concern
    (docs/targets.md), and a concern without its row is refused, never given another
    target's facts."""


def target_row(table: dict, key: str, table_name: str, what: str):
    """`table[key]`: the row of one target (`key` as that table spells it: sm_90, SM90) in the
    per-concern table `table_name` (its module and name), or MissingTargetFact naming both."""
    try:
        return table[key]
    except KeyError:
        rows = ", ".join(sorted(table)) or "none"
        raise MissingTargetFact(f"{table_name} has no {what} for target {key!r} (it has rows for {rows}): "
                                f"add {key}'s row there") from None


def target_of_nvdisasm(arch: str, what: str) -> Target:
    """The target nvdisasm calls `arch` (SM86, SM90: Target.nvdisasm_arch), for a tool that knows
    the architecture only by that name (the simulator); refused naming `what` needed it."""
    return target_row({t.nvdisasm_arch: t for t in TARGETS.values()}, arch, "bobc.targets.TARGETS", what)


def target_named(name: str) -> Target:
    try:
        return TARGETS[name]
    except KeyError:
        known = ", ".join(sorted(TARGETS))
        raise UsageError(f"unknown target '{name}'", hint=f"choose one of: {known}") from None
