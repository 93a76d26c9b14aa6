"""A Bob-shaped plan built by hand, following seed 001's arithmetic.

Four regions with dummy code (NOPs then EXIT, sm_86 encodings), 27 launches
(the initial loss, three gather+argmax predictions, ten AdamW+loss steps), 33
submissions (every launch alone, then the six prediction launches again),
and the device arena of 001 (each tensor after the previous, page-aligned).
The bases and host buffers follow examples/bob (Bob.ArenaPlan, Bob.Build.NativeHost).
"""
from __future__ import annotations

import struct

from bobc.plan.model import (DeviceArena, HostBuffer, Launch, ParameterPatch, Phase, Plan, Region, Resident,
                             Submission, WholeProgramPlan)

PROGRAM_BASE = 0x10_0000_0000          # Bob.ArenaPlan's bases
QMD_BASE = 0x10_1000_0000
PUSHBUFFER_BASE = 0x10_2000_0000
SEMAPHORE_BASE = 0x10_3000_0000
GPFIFO_BASE = 0x10_4000_0000
ARENA_BASE = 0x11_0000_0000
PAGE = 4096
ALIGNMENT = 256
PARAMETER_BYTES = 512
SEMAPHORE_STRIDE = 16
ARGUMENT0 = 0x160 // 8                  # bobArgument 0 = word 44

NOP = struct.pack("<QQ", 0x0000000000007918, 0x000FC00000000000)
EXIT = struct.pack("<QQ", 0x000000000000794D, 0x000FEA0003800000)

# (identity, instructions, registers, block x, grid x)
KERNELS = (
    ("bob-row-gather", 24, 24, 64, 1),
    ("bob-loss-gradient", 145, 32, 256, 1),
    ("bob-adamw", 81, 32, 256, 256),
    ("bob-greedy-argmax", 49, 32, 1, 1),
)
GATHER, LOSS, ADAMW, ARGMAX = range(4)


def code(instructions: int) -> bytes:
    return NOP * (instructions - 1) + EXIT


def align(value: int, alignment: int) -> int:
    return -(-value // alignment) * alignment


def places(codes) -> tuple[list[int], int]:
    out, at = [], 0
    for c in codes:
        out.append(at)
        at = align(at + len(c), ALIGNMENT)
    return out, at


# ---- the arena (001: bobArenaNext = place after, page-aligned)
TABLE = 4 * 65536
ROW = 4 * 256
INPUT_RECORD = 1564
TARGETS_OFFSET = 16 + 2 * 256
PROMPTS_OFFSET = TARGETS_OFFSET + 4 * 256
PREDICTION = 8
PROMPTS = 3


def after(address: int, size: int) -> int:
    return align(address + size, PAGE)


PARAMETERS = ARENA_BASE
FIRST_MOMENTS = after(PARAMETERS, TABLE)
SECOND_MOMENTS = after(FIRST_MOMENTS, TABLE)
GRADIENTS = after(SECOND_MOMENTS, TABLE)
INPUT = after(GRADIENTS, TABLE)
TARGETS = INPUT + TARGETS_OFFSET
PROMPT_BYTES = INPUT + PROMPTS_OFFSET
INITIAL_LOSS = after(INPUT, INPUT_RECORD)
TRAINING_LOSS = after(INITIAL_LOSS, ROW)
LOGIT_ROWS = after(TRAINING_LOSS, ROW)
PREDICTIONS = after(LOGIT_ROWS, PROMPTS * ROW)
ARENA_BYTES = PREDICTIONS + PROMPTS * PREDICTION - PARAMETERS

RESIDENTS = (
    ("parameters", PARAMETERS, TABLE),
    ("first-moments", FIRST_MOMENTS, TABLE),
    ("second-moments", SECOND_MOMENTS, TABLE),
    ("gradients", GRADIENTS, TABLE),
    ("input-record", INPUT, INPUT_RECORD),
    ("initial-loss", INITIAL_LOSS, ROW),
    ("training-loss", TRAINING_LOSS, ROW),
    ("logit-rows", LOGIT_ROWS, PROMPTS * ROW),
    ("predictions", PREDICTIONS, PROMPTS * PREDICTION),
)

LOG2E, LN2, INVERSE_ROWS = 0x3FB8AA3B, 0x3F317218, 0x3B800000


def pair(low: int, high: int) -> int:
    return low | (high << 32)


def adam_scalars(step: int) -> bytes:
    """docs/formats.md's AdamW block after the four addresses: alpha_t, epsilon_t, decay,
    beta1, 1 - beta1, beta2, 1 - beta2 (binary32), the element count and t (u32)."""
    lr, beta1, beta2, eps, wd = 0.1, 0.9, 0.999, 1e-8, 0.01
    alpha = lr * (1 - beta2 ** step) ** 0.5 / (1 - beta1 ** step)
    epsilon = eps * (1 - beta2 ** step) ** 0.5
    return struct.pack("<7f2I", alpha, epsilon, 1 - lr * wd, beta1, 1 - beta1, beta2, 1 - beta2, TABLE // 4, step)


def patches(*pairs) -> tuple[ParameterPatch, ...]:
    return tuple(ParameterPatch(ARGUMENT0 + argument, value) for argument, value in pairs)


def loss_patches(loss_address: int):
    return patches((0, PARAMETERS), (1, GRADIENTS), (2, TARGETS), (3, loss_address),
                   (6, pair(LOG2E, LN2)), (7, pair(INVERSE_ROWS, 0)))


def gather_patches(index: int):
    return patches((0, LOGIT_ROWS + index * ROW), (1, PROMPT_BYTES + index * 4), (2, PARAMETERS))


def argmax_patches(index: int):
    return patches((0, PREDICTIONS + index * PREDICTION), (1, LOGIT_ROWS + index * ROW))


def adam_patches(step: int):
    scalars = adam_scalars(step) + b"\x00\x00\x00\x00"
    words = struct.unpack("<5Q", scalars)
    return patches((0, PARAMETERS), (1, GRADIENTS), (2, FIRST_MOMENTS), (3, SECOND_MOMENTS),
                   *((4 + k, w) for k, w in enumerate(words)))


def bob_whole_program_plan(instructions=None) -> WholeProgramPlan:
    sizes = instructions or [k[1] for k in KERNELS]
    codes = [code(n) for n in sizes]
    region_places, extent = places(codes)
    regions = tuple(Region(identity, codes[i], registers, block_x, 0, region_places[i])
                    for i, (identity, _, registers, block_x, _) in enumerate(KERNELS))

    def launch(kind: int, block_patches) -> Launch:
        identity, _, _, block_x, grid_x = KERNELS[kind]
        return Launch(identity, kind, PROGRAM_BASE + region_places[kind], (grid_x, 1, 1), (block_x, 1, 1),
                      PARAMETER_BYTES, block_patches)

    launches = [launch(LOSS, loss_patches(INITIAL_LOSS))]
    for index in range(PROMPTS):
        launches += [launch(GATHER, gather_patches(index)), launch(ARGMAX, argmax_patches(index))]
    for step in range(1, 11):
        launches += [launch(ADAMW, adam_patches(step)), launch(LOSS, loss_patches(TRAINING_LOSS))]
    count = len(launches)
    submissions = [Submission("bob-submission", (i,), i * SEMAPHORE_STRIDE) for i in range(count)]
    submissions += [Submission("bob-submission", (1 + k,), (count + k) * SEMAPHORE_STRIDE)
                    for k in range(2 * PROMPTS)]
    return WholeProgramPlan(
        component="all", architecture=0x86, compute_class=0xC7C0, spa_version=0x86,
        program_base=PROGRAM_BASE, qmd_base=QMD_BASE, pushbuffer_base=PUSHBUFFER_BASE,
        semaphore_base=SEMAPHORE_BASE, region_alignment=ALIGNMENT,
        program_bytes=extent + count * PARAMETER_BYTES, regions=regions, launches=tuple(launches),
        launch_count=count, qmd_table_bytes=count * 256, submissions=tuple(submissions),
        submission_count=len(submissions), gpfifo_entries=len(submissions))


def bob_arena() -> DeviceArena:
    window = Resident("arena", PARAMETERS, ARENA_BYTES, ALIGNMENT)
    residents = tuple(Resident(name, address, size, ALIGNMENT) for name, address, size in RESIDENTS)
    phases = tuple(Phase(identity) for identity in ("bob-loss-gradient", "bob-row-gather",
                                                     "bob-greedy-argmax", "bob-adamw"))
    return DeviceArena(windows=(window,), globals=residents, phases=phases)


def bob_plan(program: WholeProgramPlan | None = None, arena: DeviceArena | None = None,
             host_buffers=()) -> Plan:
    return Plan(program=program or bob_whole_program_plan(), arena=arena or bob_arena(),
                host_buffers=tuple(host_buffers))


def host_buffers(program: WholeProgramPlan | None = None) -> tuple[HostBuffer, ...]:
    """Bob.Build.NativeHost's buffers: sized from the plan's (sm_86) numbers, page-aligned."""
    program = program or bob_whole_program_plan()
    submissions = program.submission_count
    return (
        HostBuffer("program", PROGRAM_BASE, align(program.program_bytes, PAGE)),
        HostBuffer("qmd", QMD_BASE, align(program.qmd_table_bytes, PAGE)),
        HostBuffer("pushbuffer", PUSHBUFFER_BASE, align(submissions * 1024, PAGE)),
        HostBuffer("semaphores", SEMAPHORE_BASE, align(submissions * SEMAPHORE_STRIDE, PAGE)),
        HostBuffer("gpfifo", GPFIFO_BASE, align(submissions * 8, PAGE)),
        HostBuffer("arena", ARENA_BASE, align(ARENA_BYTES, PAGE)),
    )
