"""A launch as its QMD describes it, read through qmd_fields (open-gpu-doc positions).

Which layout a QMD has follows from the compute class bound on the channel
(AMPERE_COMPUTE_B reads V03_00, HOPPER_COMPUTE_A reads V04_00), and the QMD's
own QMD_MAJOR_VERSION must agree.  Features the simulator does not model (a
QMD release, V03_00's second dependent QMD, which has no pointer of its own, queues,
constant banks other than 0 for the kernel's own use) are refused by field name when set.
The dependent QMDs, which the launch schedules when its grid ends, are read: the channel
follows them.  A QMD may prefetch what its dependent needs when its grid ends (a
PREFETCH_POST program prefetch, another constant bank bound with PREFETCH_POST, as
bobc.nvidia.encode.DependentPrefetch writes): those are read as prefetches only.  A V04_00
QMD may launch its dependents before its grid ends (ENABLE_PROGRAM_PRE_EXIT: once every block
has executed PREEXIT) and arrive at a latch when it ends, and a QMD may wait on a latch: the
channel checks that an early dependent waits on its parent's latch and opens with ACQBULK.
BARRIER_COUNT is read: the executor refuses a BAR whose barrier number the QMD does not give
the block.
"""
from __future__ import annotations

from dataclasses import dataclass

from . import qmd_fields as F
from .faults import SimulationFault, Unmodeled

# Compute classes (open-gpu-doc clc7c0.h / clcbc0.h) -> the QMD layout each reads,
# the SASS_VERSION it runs and nvdisasm's name for that architecture.
COMPUTE_CLASSES = {
    0xC7C0: ("AMPERE_COMPUTE_B", "V03_00", 0x86, "SM86"),
    0xCBC0: ("HOPPER_COMPUTE_A", "V04_00", 0x90, "SM90"),
}

# Per layout: the fields that carry each launch fact.
FACTS = {
    "V03_00": {
        "grid": ("CTA_RASTER_WIDTH", "CTA_RASTER_HEIGHT", "CTA_RASTER_DEPTH"),
        "registers": "REGISTER_COUNT_V", "cb_shift": 0,
        "cb": ("CONSTANT_BUFFER_ADDR_LOWER(0)", "CONSTANT_BUFFER_ADDR_UPPER(0)"),
        "dependents": (("DEPENDENT_QMD0_ENABLE", "DEPENDENT_QMD0_ACTION", "DEPENDENT_QMD0_POINTER"),),
        "unmodeled": ("RELEASE0_ENABLE", "RELEASE1_ENABLE", "RELEASE2_ENABLE", "DEPENDENT_QMD1_ENABLE",
                      "IS_QUEUE"),
        # bank i is fetched when the grid ends (PREFETCH_POST) when this reads 1
        "bank_post": ("CONSTANT_BUFFER_PREFETCH_POST", 1),
    },
    "V04_00": {
        "grid": ("GRID_WIDTH", "GRID_HEIGHT", "GRID_DEPTH"),
        "registers": "REGISTER_COUNT", "cb_shift": 6,
        "cb": ("CONSTANT_BUFFER_ADDR_LOWER_SHIFTED6(0)", "CONSTANT_BUFFER_ADDR_UPPER_SHIFTED6(0)"),
        "dependents": (("DEPENDENT_QMD_ENABLE(0)", "DEPENDENT_QMD_ACTION(0)", "DEPENDENT_QMD0_POINTER"),
                       ("DEPENDENT_QMD_ENABLE(1)", "DEPENDENT_QMD_ACTION(1)", "DEPENDENT_QMD1_POINTER")),
        "unmodeled": ("RELEASE_ENABLE(0)", "RELEASE_ENABLE(1)", "RELEASE_ENABLE(2)", "PRE_EXIT_AT_LAST_CTA_LAUNCH"),
        "bank_post": ("CONSTANT_BUFFER_PREFETCH", 2),
        # programmatic dependent launch: (pre-exit enable, (arrive valid, id), (wait valid, id))
        "latches": ("ENABLE_PROGRAM_PRE_EXIT", ("ARRIVE_AT_LATCH_VALID", "ARRIVE_AT_LATCH_ID"),
                    ("WAIT_ON_LATCH_VALID", "WAIT_ON_LATCH_ID")),
        # a grid of thread-block clusters: QMD_TYPE 3, the grid counted in clusters of the
        # GPC_CGA_* shape (bench/results/cuda-cluster-launch-h200.md)
        "clusters": (("QMD_TYPE", {2: False, 3: True}), ("GPC_CGA_WIDTH", "GPC_CGA_HEIGHT", "GPC_CGA_DEPTH")),
    },
}
# PROGRAM_PREFETCH_TYPE (both layouts): PREFETCH_LAUNCH 0 (the grid's own code, as it starts),
# PREFTECH_POST 1 (sic, clcbc0qmd.h: code fetched when the grid ends, for what follows it)
PROGRAM_PREFETCH_POST = 1
# DEPENDENT_QMD0_ACTION values that schedule the dependent QMD (clc7c0qmd.h / clcbc0qmd.h; the
# same numbers in both); the simulator reads every QMD from memory, so the invalidate/copy
# part needs nothing more.
SCHEDULING_DEPENDENT_ACTIONS = {1: "QMD_SCHEDULE", 3: "QMD_INVALIDATE_COPY_SCHEDULE"}


@dataclass(frozen=True)
class LaunchDescription:
    layout: str
    arch: str
    grid: tuple[int, int, int]
    block: tuple[int, int, int]
    registers: int
    shared_memory: int
    program_address: int
    prefetch_address: int
    prefetch_bytes: int
    cb0_address: int
    cb0_bytes: int
    dependents: tuple[int, ...] = ()    # the QMDs this launch schedules when its grid ends
    prefetch_post: bool = False         # the prefetch window is fetched when the grid ends, for what follows
    post_banks: tuple[tuple[int, int, int], ...] = ()   # (slot, address, bytes) of banks fetched at the end
    early_dependents: bool = False      # the dependents launch once every block has executed PREEXIT
    arrive_latch: int | None = None     # the latch the grid arrives at when it has ended
    wait_latch: int | None = None       # the latch the grid waits on (it may start before its parent ends)
    cluster: tuple[int, int, int] = (1, 1, 1)   # blocks a thread-block cluster (the grid counts blocks)
    barriers: int = 16                  # BARRIER_COUNT: the named barriers a block has (0 .. barriers - 1)


def check_block_resources(where: str, sass: int, block: tuple[int, int, int], registers: int, shared: int) -> None:
    """Refuse a block the GPU of SASS version `sass` does not launch: more threads than a block may
    have, more registers than a block may have as the GPU's launch check counts them (warps rounded
    up to the SM's sub-partitions), or more shared memory than one block may have.  The bounds are
    the hardware's (the CUDA Programming Guide's table, NVIDIA's cuda_occupancy.h), declared once in
    bobc.targets; the block, registers and shared memory are this QMD's, as read here."""
    from ..targets import TARGETS

    target = next((t for t in TARGETS.values() if t.sm == sass), None)
    if target is None:
        return
    limits, sm = target.limits, target.sm_resources
    threads = block[0] * block[1] * block[2]
    if (block[0] > limits.block_xy or block[1] > limits.block_xy or block[2] > limits.block_z
            or threads > limits.threads_per_block):
        raise SimulationFault(f"{where}: block {block} ({threads} threads): a {target.name} block has at most "
                              f"{limits.threads_per_block} threads ({limits.block_xy} x {limits.block_xy} x "
                              f"{limits.block_z}), so the GPU does not launch it")
    counted = sm.block_registers(threads, registers)
    if counted > limits.registers_per_block:
        raise SimulationFault(f"{where}: block {block} of {registers} registers a thread takes {counted} registers "
                              f"as {target.name} counts a block (warps of {sm.warp_registers(registers)}, rounded up "
                              f"to a multiple of its {sm.sub_partitions} sub-partitions), more than the "
                              f"{limits.registers_per_block} a block may have, so the GPU does not launch it")
    if shared > sm.block_shared_bytes:
        raise SimulationFault(f"{where}: SHARED_MEMORY_SIZE {shared} is more than the {sm.block_shared_bytes} bytes "
                              f"a {target.name} block may have ({sm.block_shared_why}), so the GPU does not "
                              f"launch it")


def read_launch(raw: bytes, compute_class: int, where: str) -> LaunchDescription:
    if compute_class not in COMPUTE_CLASSES:
        raise Unmodeled(f"{where}: compute class {compute_class:#06x} is bound; the simulator models "
                        + ", ".join(f"{n} ({c:#06x})" for c, (n, *_rest) in COMPUTE_CLASSES.items()))
    class_name, layout, sass, arch = COMPUTE_CLASSES[compute_class]
    facts = FACTS[layout]

    def field(name):
        return F.read(raw, layout, name)

    major = field("QMD_MAJOR_VERSION")
    if F.MAJOR_VERSIONS.get(major) != layout:
        raise SimulationFault(f"{where}: {class_name} reads QMD {layout}, but the QMD says major version {major}")
    if field("SASS_VERSION") != sass:
        raise SimulationFault(f"{where}: SASS_VERSION {field('SASS_VERSION'):#x}, {class_name} runs {sass:#x}")
    for name in facts["unmodeled"]:
        if field(name):
            raise Unmodeled(f"{where}: the QMD sets {name}, which the simulator does not model")
    post_banks = []
    post_field, post_value = facts["bank_post"]
    bank_low, bank_high = (name.removesuffix("(0)") for name in facts["cb"])    # bank 0's fields, any slot
    for slot in range(1, 8):
        if not field(f"CONSTANT_BUFFER_VALID({slot})"):
            continue
        if field(f"{post_field}({slot})") != post_value:
            raise Unmodeled(f"{where}: the QMD binds constant bank {slot} for its kernel; the simulator models "
                            "bank 0 only (another bank only as a prefetch when the grid ends, PREFETCH_POST)")
        post_banks.append((slot, (field(f"{bank_low}({slot})") | field(f"{bank_high}({slot})") << 32) << facts["cb_shift"],
                           field(f"CONSTANT_BUFFER_SIZE_SHIFTED4({slot})") * 16))
    if not field("CONSTANT_BUFFER_VALID(0)"):
        raise SimulationFault(f"{where}: the QMD binds no constant bank 0 (CONSTANT_BUFFER_VALID(0) is 0), "
                              "so the kernel has no parameters")
    grid = tuple(field(n) for n in facts["grid"])
    block = tuple(field(f"CTA_THREAD_DIMENSION{i}") for i in range(3))
    if 0 in grid or 0 in block:
        raise SimulationFault(f"{where}: empty grid {grid} or block {block}")
    check_block_resources(where, sass, block, field(facts["registers"]), field("SHARED_MEMORY_SIZE"))
    cluster = (1, 1, 1)
    if "clusters" in facts:
        (type_field, types), shape = facts["clusters"]
        kind = field(type_field)
        if kind not in types:
            raise Unmodeled(f"{where}: QMD_TYPE {kind}; the simulator models "
                            + ", ".join(f"{k} ({'clusters' if v else 'a grid of blocks'})" for k, v in types.items()))
        if types[kind]:
            cluster = tuple(field(n) for n in shape)
            if 0 in cluster:
                raise SimulationFault(f"{where}: a cluster launch (QMD_TYPE {kind}) with an empty cluster {cluster}")
            grid = tuple(g * c for g, c in zip(grid, cluster))      # the QMD counts clusters
    dependents = []
    for enable, action, pointer in facts["dependents"]:
        if not field(enable):
            continue
        if field(action) not in SCHEDULING_DEPENDENT_ACTIONS:
            raise Unmodeled(f"{where}: the dependent QMD action ({action}) is {field(action)}; the simulator models "
                            + ", ".join(f"{v} ({k})" for k, v in SCHEDULING_DEPENDENT_ACTIONS.items()))
        dependents.append(field(pointer) << 8)
    low, high = facts["cb"]
    cb0 = (field(low) | field(high) << 32) << facts["cb_shift"]
    early, arrive, wait = False, None, None
    if "latches" in facts:
        pre_exit, (arrive_valid, arrive_id), (wait_valid, wait_id) = facts["latches"]
        early = bool(field(pre_exit))
        arrive = field(arrive_id) if field(arrive_valid) else None
        wait = field(wait_id) if field(wait_valid) else None
    return LaunchDescription(
        layout, arch, grid, block, field(facts["registers"]), field("SHARED_MEMORY_SIZE"),
        field("PROGRAM_ADDRESS_LOWER") | field("PROGRAM_ADDRESS_UPPER") << 32,
        (field("PROGRAM_PREFETCH_ADDR_LOWER_SHIFTED") | field("PROGRAM_PREFETCH_ADDR_UPPER_SHIFTED") << 32) << 8,
        field("PROGRAM_PREFETCH_SIZE") * 256, cb0, field("CONSTANT_BUFFER_SIZE_SHIFTED4(0)") * 16, tuple(dependents),
        field("PROGRAM_PREFETCH_TYPE") == PROGRAM_PREFETCH_POST, tuple(post_banks), early, arrive, wait, cluster,
        field("BARRIER_COUNT"))
