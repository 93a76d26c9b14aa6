"""What the certifier accepts, the runtime can run: sizes, alignment and C types.

The certifier's other checks ask whether a plan is sound; these ask whether
the host bobc would generate for it can exist: every integer that reaches the
generated C fits its C type (a chunk count of 10^40 once passed check and
failed inside gcc), every buffer is where the driver shim can map it, and the
plan's counts stay within bounds bobc documents (docs/limits.md is the table;
this module and compiler/bobc/language/limits.py are where each is declared).
A plan past one gets a finding naming the plan part and the limit.
"""
from __future__ import annotations

import dataclasses

from ..errors import shown_plan_text
from ..plan.model import Plan, cluster_tiles, place
from ..resources import doc
from ..targets import Target
from .findings import Finding

U32 = 2 ** 32 - 1
U64 = 2 ** 64 - 1

# runtime_c/nv_shim.c rt_gpu_alloc_at: a buffer's GPU VA is 4 KiB aligned
PAGE_BYTES = 4096
# runtime_c/nv_rm.h RT_VASPACE_BASE: the GPU VA space the runtime creates begins here; a buffer
# below it (at GPU address 0) lies outside it
VA_SPACE_START = 0x1000
# runtime_c/nv_shim.c rt_gpu_alloc_at: a buffer of no bytes is refused there, on the GPU (exit 1,
# an internal error), so the certifier refuses it first
BUFFER_LEAST_BYTES = 1
# runtime_c/nv_shim.h RT_GPU_DEFAULT_CHANNEL_VA: the shim's own channel, notifier and
# UVM channel live from here up; a plan's buffers end below it
SHIM_VA_START = 0x00FC00000000
# the bounds above that runtime_c declares too: this module's name -> (runtime_c's file, its
# #define), so a test holds them equal (tests/certify/test_runtime_bounds.py)
RUNTIME_C_BOUNDS = {
    "PAGE_BYTES": ("nv_shim.c", "PAGE_4K"),
    "VA_SPACE_START": ("nv_rm.h", "RT_VASPACE_BASE"),
    "SHIM_VA_START": ("nv_shim.h", "RT_GPU_DEFAULT_CHANNEL_VA"),
}
# runtime_c/nv_shim.h RT_GPU_MAX_MEMS (64) allocations, of which bring-up takes a few
BUFFER_COUNT = 48
# one host buffer (bobc's bound; the H200's 141 GB would allow more)
BUFFER_BYTES = 16 << 30
# launches and submissions of one invocation, and the host's unrolled schedule steps
# (language/limits.py STRUCTURE_LOOP_COUNT is LAUNCH_COUNT: a loop building a schedule
# past it is refused before it is unrolled)
LAUNCH_COUNT = 1 << 16
SUBMISSION_COUNT = 1 << 16


def bound_language_structures() -> None:
    """Have the evaluator refuse a loop that builds a launch schedule of more than LAUNCH_COUNT
    launches, or a submission schedule of more than SUBMISSION_COUNT submissions, as soon as the
    loop ends (language/limits.py STRUCTURE_BOUNDS): the count past the bound is then refused in
    seconds, not after the plan's arena certificate and the extraction have walked every launch
    (minutes, probe s33 fuzzplan finding 4, docs33 finding 1).  The launches are the schedule's
    NvidiaLaunchScheduleOne nodes and the submissions its NvidiaSubmissionScheduleOne nodes, as
    bobc.plan.extract reads them.  A NvidiaSubmissionScheduleRepeat's body is counted once here
    (the evaluator counts nodes, not repeats): a count it misses is still refused, later, by the
    certifier's own SUBMISSION_COUNT, so this bound never refuses a plan within it."""
    from ..language.limits import bound_structure

    bound_structure("NvidiaLaunchSchedule", "NvidiaLaunchScheduleOne", LAUNCH_COUNT, "launches")
    bound_structure("NvidiaSubmissionSchedule", "NvidiaSubmissionScheduleOne", SUBMISSION_COUNT,
                    "submissions")
HOST_STEP_COUNT = 1 << 20
# host-step repeats nested one in another's body: the certifier's walks of the schedule recurse a few
# Python frames a level (8,000 levels ended `bobc check` with a RecursionError traceback, under
# `ulimit -v` a SIGSEGV; probe s43 scale), and name each step by its path, which grows with the
# depth; the native hosts' own bound (runtime_c/native_program.h NP_MAX_REPEAT_NESTING) is the same
HOST_REPEAT_NESTING = 64
# one identity string in the checkpoint envelope (its length is a u32 in the header)
IDENTITY_BYTES = 1 << 16
# runtime_c/host_io.h RT_IO_INPUT_LIMIT_BYTES: the host must be able to read its own checkpoint
CHECKPOINT_FILE_BYTES = 1 << 30
# runtime_c/host_io.h RT_IO_STEP_LIMIT: a per-step fill's u32 global step
STEP_LIMIT = U32
# runtime_c/native_request.c (`shift == 0 || shift > 63` refused) and plan/extract.py: a SplitMix64
# initializer shifts its 64-bit draw by 1..63 (0 would keep the whole draw, which rt_init_chunk then
# takes as an int64_t; docs/limits.md)
INITIALIZER_SHIFT_LEAST, INITIALIZER_SHIFT = 1, 63
# runtime_c/host_runtime.c rt_init_chunk: element i is (u - center) / denominator with u = z_i >> shift
# (below 2^63) and the difference taken in int64_t, so a center past 2^63 - 1 would overflow it
# (the C host's value would differ from the exact one, and the reference runner's NumPy subtraction fails)
INITIALIZER_CENTER = 2 ** 63 - 1
# grid and block bounds: the target's (bobc.targets TargetLimits)


def shown(value: int, commas: bool = True) -> str:
    """An integer as a fault shows it: with commas (`commas`), or past 40 digits its first digits
    and how many it has, as plan-language errors show a natural (docs/limits.md; a grid of
    2^262,143 once printed a 422 KB error)."""
    from ..language.quote import SHOWN_DIGITS, show_natural

    if abs(value).bit_length() > SHOWN_DIGITS * 3 and len(str(abs(value))) > SHOWN_DIGITS:
        return ("-" if value < 0 else "") + show_natural(abs(value))
    return f"{value:,}" if commas else str(value)


# a distance between addresses from this many bytes is shown in hex beside its count too
SHOWN_BYTES_HEX_FROM = 1 << 16


def shown_bytes(count: int, distance: bool = False) -> str:
    """A count of bytes as a fault shows it: "1 byte", "28 bytes", "4,096 bytes" (past 40 digits
    cut as `shown` cuts them); a `distance` between addresses from 64 KiB on also in hex, as the
    addresses beside it are: "270,582,918,912 bytes (0x3effffaf00)"."""
    text = f"{shown(count)} {'byte' if count == 1 else 'bytes'}"
    if distance and abs(count) >= SHOWN_BYTES_HEX_FROM:
        text += f" ({'-' if count < 0 else ''}{shown_hex(abs(count))})"
    return text


def shown_hex(value: int) -> str:
    """An address as a fault shows it: in hex, or past 40 hex digits its first ones and how many
    it has."""
    text = f"{value:#x}"
    digits = len(text) - 2
    if digits > 40:
        return f"{text[:22]}...({digits:,} hex digits)"
    return text


def checkpoint_file_bytes(contract) -> int:
    """The bytes of a checkpoint file a host publishes for `contract` (a CheckpointContract: a
    plan's, or a native request's Request.contract): what it must be able to read back."""
    from ..reference.envelope import file_bytes    # the envelope's format (docs/formats.md), declared there

    return file_bytes(contract)


def checkpoint_file_finding(contract, at=None) -> Finding | None:
    """The refusal of a checkpoint the host could not read back (its file past
    CHECKPOINT_FILE_BYTES), else None."""
    size = checkpoint_file_bytes(contract)
    if size <= CHECKPOINT_FILE_BYTES:
        return None
    return Finding("limit", f"the checkpoint's file is {shown(size)} bytes (its {shown(contract.payload_bytes)}-byte "
                            f"payload "
                            f"in its envelope): more than the {CHECKPOINT_FILE_BYTES:,} bytes a host reads, so the "
                            f"host could not resume from its own checkpoint ({doc('limits.md')})", at)


def check_limits(plan: Plan, target: Target) -> list[Finding]:
    """Every place `plan` asks for more than the runtime and the generated C can hold."""
    out: list[Finding] = []

    def limit(what: str, value: int, most: int, unit: str = "", least: int = 0, at=None) -> None:
        if not least <= value <= most:
            out.append(Finding("limit", f"{what} is {shown(value)}{unit}: outside {least:,}..{most:,}{unit} "
                                        f"({doc('limits.md')})", at))

    program = plan.program
    bounds = target.limits
    limit("the launch count", len(program.launches), LAUNCH_COUNT)
    limit("the declared launch count", program.launch_count, LAUNCH_COUNT)
    limit("the submission count", len(program.submissions), SUBMISSION_COUNT)
    limit("the declared submission count", program.submission_count, SUBMISSION_COUNT)
    limit("the GPFIFO entries", program.gpfifo_entries, U32, at=place(program, "gpfifo_entries"))
    for name in ("program_base", "qmd_base", "pushbuffer_base", "semaphore_base", "program_bytes",
                 "qmd_table_bytes", "region_alignment"):
        limit(f"the program's {name.replace('_', ' ')}", getattr(program, name), U64, at=place(program, name))
    for index, launch in enumerate(program.launches[:LAUNCH_COUNT]):
        name = f"launch {index} ({shown_plan_text(launch.identity)})" if hasattr(launch, "identity") else f"launch {index}"
        gx, gy, gz = launch.grid
        bx, by, bz = launch.block
        limit(f"{name}'s grid x", gx, bounds.grid_x, least=1, at=launch.at)
        limit(f"{name}'s grid y", gy, bounds.grid_yz, least=1, at=launch.at)
        limit(f"{name}'s grid z", gz, bounds.grid_yz, least=1, at=launch.at)
        limit(f"{name}'s block x", bx, bounds.block_xy, least=1, at=launch.at)
        limit(f"{name}'s block y", by, bounds.block_xy, least=1, at=launch.at)
        limit(f"{name}'s block z", bz, bounds.block_z, least=1, at=launch.at)
        if 0 <= bx <= bounds.block_xy and 0 <= by <= bounds.block_xy and 0 <= bz <= bounds.block_z:
            limit(f"{name}'s threads per block", bx * by * bz, bounds.threads_per_block, least=1, at=launch.at)
        limit(f"{name}'s parameter bytes", launch.parameter_bytes, target.parameter_block_bytes, at=launch.at)
        cluster = getattr(launch, "cluster", (1, 1, 1))
        if cluster != (1, 1, 1):
            blocks = cluster[0] * cluster[1] * cluster[2]
            if not cluster_tiles(launch.grid, cluster):
                out.append(Finding("limit", f"{name}'s clusters of {cluster[0]} x {cluster[1]} x {cluster[2]} "
                                            f"blocks do not tile its grid {launch.grid}: each dimension of the "
                                            f"cluster must divide the grid's ({doc('limits.md')})", launch.at))
            elif blocks > bounds.cluster_blocks:
                limit(f"{name}'s blocks a cluster", blocks, bounds.cluster_blocks, at=launch.at)
        for patch in launch.patches:
            limit(f"{name}'s parameter word {patch.word}'s value", patch.value, U64, at=patch.at or launch.at)

    host = plan.host
    buffers = host.buffers if host is not None else ()
    limit("the host buffer count", len(buffers), BUFFER_COUNT)
    for b in buffers:
        name = f"host buffer {shown_plan_text(b.name)}"
        gpu, extent = b.gpu, b.extent
        if gpu % PAGE_BYTES or b.host % PAGE_BYTES:
            out.append(Finding("limit", f"{name} at {shown_hex(gpu)} is not 4 KiB aligned: the driver shim "
                                        f"maps buffers at 4 KiB boundaries only ({doc('limits.md')})",
                               place(b, "gpu" if gpu % PAGE_BYTES else "host")))
        elif 0 <= gpu < VA_SPACE_START:
            out.append(Finding("limit", f"{name} at GPU address {gpu:#x} lies below the GPU address space "
                                        f"the runtime creates, which begins at {VA_SPACE_START:#x} "
                                        f"(runtime_c's RT_VASPACE_BASE), so the host could not map it: "
                                        f"place it at {VA_SPACE_START:#x} or above ({doc('limits.md')})",
                               place(b, "gpu")))
        if 0 <= extent < BUFFER_LEAST_BYTES:
            out.append(Finding("limit", f"{name} has {extent} bytes: the runtime maps no empty buffer "
                                        f"(rt_gpu_alloc_at refuses it, so the host would stop with an "
                                        f"internal error on the GPU); give it at least "
                                        f"{BUFFER_LEAST_BYTES} byte, or remove it ({doc('limits.md')})",
                               place(b, "extent")))
        else:
            limit(f"{name}'s size", extent, BUFFER_BYTES, " bytes", at=place(b, "extent"))
        limit(f"{name}'s host address", b.host, U64, at=place(b, "host"))
        if 0 <= gpu and 0 <= extent and gpu + extent > SHIM_VA_START:
            out.append(Finding("limit", f"{name} [{shown_hex(gpu)}, {shown_hex(gpu + extent)}) reaches the driver "
                                        f"shim's own addresses (from {SHIM_VA_START:#x}; {doc('limits.md')})",
                               place(b, "gpu")))

    contract = plan.checkpoint
    if contract is not None:
        for part in ("schema", "learner", "data", "seed"):
            limit(f"the checkpoint's {part} identity", len(getattr(contract, part)), IDENTITY_BYTES,
                  " bytes")
        limit("the checkpoint's updates per invocation", contract.updates_per_invocation, STEP_LIMIT)
        limit("the checkpoint's chunk bytes", contract.chunk_bytes, U64, " bytes")
        limit("the checkpoint's payload bytes", contract.payload_bytes, CHECKPOINT_FILE_BYTES, " bytes")
        if 0 <= contract.payload_bytes <= CHECKPOINT_FILE_BYTES:
            unreadable = checkpoint_file_finding(contract)      # the envelope's bytes count too
            if unreadable is not None:
                out.append(unreadable)
        if contract.chunk_bytes <= 0:
            out.append(Finding("limit", "the checkpoint's chunk bytes are 0: its payload cannot be "
                                        "divided into chunks"))
        else:
            if contract.payload_bytes % contract.chunk_bytes:
                out.append(Finding("limit", f"the checkpoint's payload ({shown(contract.payload_bytes)} "
                                            f"bytes) is not a whole number of {shown(contract.chunk_bytes)}-"
                                            "byte chunks"))
            limit("the checkpoint's chunk count", contract.payload_bytes // contract.chunk_bytes, U32)
            limit("the checkpoint's parameter count", contract.chunk_bytes // 4, U32)

    if host is not None:
        _fills(plan, out)
        for index, initializer in enumerate(host.initializers):
            name = f"checkpoint chunk {index}'s initializer ({initializer.kind})"
            if initializer.kind != "zero":          # a zero initializer draws nothing: it has no shift
                limit(f"{name} shift", initializer.shift, INITIALIZER_SHIFT, least=INITIALIZER_SHIFT_LEAST,
                      at=place(initializer, "shift"))
            limit(f"{name} center", initializer.center, INITIALIZER_CENTER, at=place(initializer, "center"))
            if not 1 <= initializer.denominator <= U64:
                out.append(Finding("limit", f"{name} denominator is {shown(initializer.denominator)}: outside "
                                            f"1..{U64:,} ({doc('limits.md')})", place(initializer, "denominator")))
        unrolled = _unrolled(host.steps, out)
        limit("the host's schedule (steps once repeats are unrolled)", unrolled, HOST_STEP_COUNT)
        for key in ("semaphore_stride", "forward_launches"):
            _integers(getattr(host, key), f"the plan's {key.replace('_', ' ')}", out)
        _integers(dataclasses.astuple(host.request), "the plan's request layout", out)
    return out


def _fills(plan: Plan, out) -> None:
    """Each fill's step fits the host's u32 step and its four bytes lie in its launch's
    parameter block (the host generator would refuse the plan only at build time), at a multiple
    of 4, and no other fill of its launch writes them."""
    from ..nvidia.encode import plan_parameter_base
    from ..targets import declared_target

    launches = plan.program.launches
    known = declared_target(plan.program.architecture, plan.program.compute_class) is not None
    written: dict[int, dict[int, int]] = {}         # launch -> parameter byte -> the first fill writing it

    def launch_named(number) -> str:
        if isinstance(number, int) and 0 <= number < len(launches):
            return f"launch {number} ({shown_plan_text(launches[number].identity)})"
        return f"launch {number}"

    for index, fill in enumerate(plan.host.fills):
        if not 0 <= fill.step <= STEP_LIMIT:
            out.append(Finding("limit", f"fill {index}'s step is {shown(fill.step)}: outside 0..{STEP_LIMIT:,}, the "
                                        f"host's u32 step ({doc('limits.md')})", place(fill, "step")))
        elif fill.encoding == "word32":
            _fresh_word32(index, fill, out)
        if isinstance(fill.offset, int) and fill.offset >= 0 and fill.offset % fill.width:
            # a kernel reads its 32-bit scalars at multiples of 4 (LDC), so four bytes from elsewhere
            # are half of one scalar and half of the next, neither of them the fill's value
            first, word = fill.offset, fill.offset // 8
            out.append(Finding("misaligned", f"fill {index} writes bytes {first:,}..{first + fill.width - 1:,} of "
                                             f"{launch_named(fill.launch)}'s parameters, at an offset that is no multiple of "
                                             f"{fill.width}: its {fill.encoding} would straddle two of the 32-bit "
                                             f"scalars a kernel reads",
                               place(fill, "offset"),
                               f"give the offset of the half it sets, from the parameter base: argument i's low "
                               f"half is byte 8i, its high half 8i + 4 (argument {word}: {8 * word} or {8 * word + 4})"))
        if isinstance(fill.launch, int) and isinstance(fill.offset, int) and fill.offset >= 0:
            # every fill of a launch is written before each issue of it, in the plan's order
            # (bobc.plan.schedule.lower): of two that write one byte, the earlier never reaches the kernel
            mine = written.setdefault(fill.launch, {})
            earlier = sorted({mine[b] for b in range(fill.offset, fill.offset + fill.width) if b in mine})
            if earlier:
                out.append(Finding("plan", f"fill {index} writes bytes {fill.offset:,}..{fill.offset + fill.width - 1:,} "
                                           f"of {launch_named(fill.launch)}'s parameters, which fill {earlier[0]} writes too: "
                                           f"the host writes every fill of a launch, in order, before each issue of "
                                           f"it, so fill {earlier[0]}'s value never reaches the kernel",
                                   place(fill, "launch") or place(fill, "offset"),
                                   "give each fill its own launch or bytes (a value that changes with the step is "
                                   "one fill, its scalar a function of t)"))
            for b in range(fill.offset, fill.offset + fill.width):
                mine.setdefault(b, index)
        if not 0 <= fill.launch < len(launches) or not known:
            continue            # (a device bobc does not know has no parameter layout: check_declared_device)
        launch, base = launches[fill.launch], plan_parameter_base(plan.program)
        if launch.parameter_bytes <= base:
            continue            # no parameters at the declared device's base: the layout check says so
        overrun = fill.overrun(launch, base)
        if overrun:
            out.append(Finding("limit", f"fill {index} {overrun}: give an offset below "
                                        f"{launch.parameter_bytes - base - fill.width + 1}", place(fill, "offset")))


def _fresh_word32(index: int, fill, out) -> None:
    """A word32 fill whose value at a fresh run's global step (no --checkpoint: input step 0, so
    t = the fill's step) is no natural below 2^32: every invocation without a checkpoint -- the
    first train of all -- would stop at it, the C host's internal error (exit 1, a line that names
    no fill), so it is refused here, at the fill (probe s43 newuser8).  The value is the one the
    hosts compute (encoded_fill, runtime_c/plan_fill.c bobc_fill_bytes); a value that fails only
    at later steps depends on the input checkpoint and is still the run's refusal."""
    from ..plan.host import FillValueError, ScalarProgramError, encoded_fill, printf_17g

    try:
        # the hosts' own evaluator, NumPy-free (`bobc check` imports no NumPy: tests/test_build_caches.py)
        value = fill.value.evaluate(fill.step)
        encoded_fill("word32", value, fill.step)
    except ScalarProgramError:
        return                  # (a Scalar's own program always leaves one value)
    except FillValueError:
        out.append(Finding("plan", f"fill {index}'s value at a fresh run's step t = {fill.step} is "
                                   f"{printf_17g(value)}, which its word32 encoding cannot hold (a "
                                   f"natural below 2^32): every run without --checkpoint would stop "
                                   f"there with the host's internal error, exit 1",
                           place(fill, "value") or place(fill, "launch"),
                           "encode a fractional or negative value as NvidiaPlanHostEncodeBinary32, or give "
                           "the word32 fill a program whose value is a whole number 0..4294967295 at every "
                           f"step ({doc('host-steps.md')}, \"Fills, records, initializers\")"))


def _unrolled(steps, out, depth: int = 0) -> int:
    """Steps once every repeat is unrolled, computed without unrolling them.  A repeat whose body
    unrolls to no step (an empty body, a Repeat 0) counts one step an iteration: the walks of the
    unrolled schedule (the certifier's, bobc.plan.schedule.unroll) still iterate it, so
    Repeat 2^16 (Repeat 2^16 (Repeat 0 ...)) counted 0 steps and ran `bobc check` for hours."""
    total = 0
    for step in steps:
        if step.kind.name == "repeat":
            if depth + 1 > HOST_REPEAT_NESTING:
                out.append(Finding("limit", f"the host's schedule nests repeats more than {HOST_REPEAT_NESTING} deep "
                                            f"(one in another's body): nest fewer, or unroll the inner ones "
                                            f"({doc('limits.md')})", step.at))
                return total                    # refused: nothing deeper is walked or counted
            body = _unrolled(step.body, out, depth + 1)
            total += step.count * max(body, 1)
        else:
            total += 1
            for f in step.kind.fields:
                if f.kind == "nat":
                    _integer(getattr(step, f.name), f"the host's {step.kind.name} step's {f.name}",
                             f.c_type or "uint64_t", out, step.at)
        if total > HOST_STEP_COUNT:      # already too many: stop before the numbers get huge
            return total
    return total


# the generated C's integer types (plan_steps.h: a step field's StepField.c_type) -> their largest value
C_TYPE_MOST = {"uint32_t": U32, "uint64_t": U64, "int32_t": 2 ** 31 - 1}


def _integer(value: int, what: str, c_type: str, out, at=None) -> None:
    """A step field's value fits the C type the generated host declares it as (a uint32_t field,
    read's tolerate_empty, once took 2^32 through the certifier and failed inside gcc)."""
    most = C_TYPE_MOST.get(c_type, U64)
    if not 0 <= value <= most:
        out.append(Finding("limit", f"{what} is {shown(value)}: outside 0..{most:,}, the generated C's {c_type} "
                                    f"({doc('limits.md')})", at))


def _integers(value, what: str, out, at=None) -> None:
    """Every integer in `value` (nested dicts/lists) fits the C host's u64."""
    if isinstance(value, bool):
        return
    if isinstance(value, int):
        if not 0 <= value <= U64:
            out.append(Finding("limit", f"{what} holds {shown(value)}: outside 0..{U64:,}, the generated "
                                        f"C's uint64_t ({doc('limits.md')})", at))
    elif isinstance(value, dict):
        for key, item in value.items():
            _integers(item, what, out, at)
    elif isinstance(value, (list, tuple)):
        for item in value:
            _integers(item, what, out, at)
