"""The plan-driven reference host: the same step list the native host carries
out (bobc.plan.schedule.lower), interpreted in Python over byte buffers, each
launch dispatched to the NumPy implementation a model registers for its
region.  Nothing here knows a model: sizes, record checks, initializers,
fills and files all come from the plan (docs/host-steps.md).

Where the native host reads the GPU's clock (Stamp, WriteTimestamps) the
reference writes the ring issue number instead; every other output is the
native host's, byte for byte, when the registered kernels compute what the
device kernels compute.

File I/O goes through `read_file` and `publish` (arguments), so a safer I/O
layer drops in without touching the interpreter.
"""
from __future__ import annotations

import operator
import struct
from dataclasses import dataclass, field
from typing import Callable

import numpy as np

from ..errors import BobcError, printable
from ..native.words import count as _count
from ..plan.host import FILE_NAMES, FillValueError, RecordCheck, fill_refusal, word_value
from ..plan.schedule import lower, publication_count
from . import envelope
from .errors import BadInputRecord
from .plan_commands import CommandsStopped, PlanCommandsMachine


class ReferenceHostError(BobcError):
    """The plan asks the reference host for something it cannot do."""


class InputReadPastRecord(ReferenceHostError):
    """A cyclic read or a read at the cursor past the input record: the C host's bad input, exit 3
    (runtime_c/plan_host.c read_input), in its words."""

    exit_code = 3


class AssertedWordDiffers(ReferenceHostError):
    """An AssertWord whose word is not the expected one: the C host's device fault, exit 7
    (runtime_c/plan_host.c step_assert_word; docs/host-steps.md), as the simulator's."""

    exit_code = 7


def read_past_input(kind: str, extent: int, offset: int, available: int,
                    cursor_from: tuple[int, int, int] | None = None) -> ReferenceHostError:
    """The refusal of a `kind` step reading `extent` bytes at `offset` of an `available`-byte input,
    as runtime_c/plan_host.c words it: a Read's is the schedule's fault (exit 1; the certifier
    refuses one of the input record), a cyclic read's and a read at the cursor's the input's
    (exit 3).  The simulator raises the same."""
    if kind == "read":
        return ReferenceHostError(f"the schedule reads {_count(extent, 'byte')} at {offset} of a {available}-byte "
                                  "input")
    what = "a cyclic read" if kind == "read_cyclic" else "a read at the cursor"
    said = f"{what}: {_count(extent, 'byte')} at {offset} of a {available}-byte input"
    if kind == "read_at_cursor" and cursor_from is not None and cursor_from[0]:
        # `cursor_from`: (the input checkpoint's step, the last CursorFromCheckpoint's scale, base);
        # a resumed run's cursor starts past a fresh run's (plan_host.c read_input)
        step, scale, base = cursor_from
        said += (f" (the cursor started at byte {step * scale + base}: the input checkpoint's step {step} x {scale} "
                 f"+ {base}; resume from an earlier checkpoint, or give an input that holds what a run from step "
                 f"{step} reads)")
    return InputReadPastRecord(said)


def wrote_other_than_the_contract(written: int, payload_bytes: int) -> ReferenceHostError:
    """A checkpoint publication of `written` bytes where the contract holds `payload_bytes`, as
    runtime_c/plan_host.c step_checkpoint_publish words it (exit 1: the schedule's fault)."""
    return ReferenceHostError(f"the schedule wrote {_count(written, 'checkpoint byte')}, the contract holds "
                              f"{payload_bytes}")


class CommandsFailed(ReferenceHostError):
    """A Commands step's Fail or fault: the invocation ends with the native status, nothing
    published (runtime_c/plan_commands.c); the message is the C host's."""

    def __init__(self, status: int, message: str):
        super().__init__(message)
        self.exit_code = status


@dataclass
class Memory:
    """The plan's buffers as bytearrays, addressed by GPU address (host = GPU)."""

    buffers: list = field(default_factory=list)      # (base, bytearray)
    # while a kernel runs whose contract's write extents are known: those extents (sorted,
    # merged [start, end)) and, per view it took that reaches outside them, its bytes before
    guard: tuple | None = None                        # (spans, [(address, bytes before)])

    @classmethod
    def for_plan(cls, plan) -> "Memory":
        return cls([(b.gpu, bytearray(b.extent)) for b in plan.host.buffers])

    def _view(self, address: int, size: int) -> memoryview:
        # a negative size was a slice's negative stop: empty, or (a view at a buffer's start) the
        # buffer up to that many bytes before its end, which a kernel then wrote over (probe s41
        # newuser5, finding 6)
        if not isinstance(size, (int, np.integer)) or size < 0:
            raise ReferenceHostError(f"a view of {size!r} bytes at {address:#x}: a view's size is a whole "
                                     f"number of bytes, 0 or more")
        for base, data in self.buffers:
            if base <= address and address + size <= base + len(data):
                return memoryview(data)[address - base:address - base + size]
        raise ReferenceHostError(f"{size} bytes at {address:#x} lie in no buffer the plan maps")

    def view(self, address: int, size: int) -> memoryview:
        view = self._view(address, size)
        if self.guard is not None and size and not any(a <= address and address + size <= b
                                                       for a, b in self.guard[0]):
            self.guard[1].append((address, bytes(view)))
        return view

    def read(self, address: int, size: int) -> bytes:
        return bytes(self._view(address, size))

    def write(self, address: int, data: bytes) -> None:
        self.view(address, len(data))[:] = data

    def array(self, address: int, dtype, count: int) -> np.ndarray:
        """A NumPy view (writable) of `count` elements at `address`."""
        itemsize = np.dtype(dtype).itemsize
        if not isinstance(count, (int, np.integer)) or count < 0:
            raise ReferenceHostError(f"memory.array({address:#x}, {np.dtype(dtype).str!r}, {count!r}): the count "
                                     f"of elements is a whole number, 0 or more")
        return np.frombuffer(self.view(address, itemsize * int(count)), dtype=dtype)


@dataclass(frozen=True)
class LaunchContext:
    """What a registered kernel sees: its launch, and its kernel parameters as the
    plan (and the fills) set them, from the parameter base."""

    index: int
    launch: object            # bobc.plan.model.Launch
    parameters: bytes

    # Each reader refuses a place outside the launch's parameters by name: struct's unpack_from
    # reads a negative offset from the end (launch.word(-1) was the last word, silently) and says
    # a place past them in its own words ("unpack_from requires a buffer of at least 328 bytes")
    # (probe s41 newuser5, finding 5).
    def word(self, index: int) -> int:
        return struct.unpack_from("<Q", self.parameters, self._place("word", index, 8 * index, 8))[0]

    def u32(self, offset: int) -> int:
        return struct.unpack_from("<I", self.parameters, self._place("u32", offset, offset, 4))[0]

    def f32(self, offset: int) -> float:
        return struct.unpack_from("<f", self.parameters, self._place("f32", offset, offset, 4))[0]

    def _place(self, reader: str, given, offset, size: int) -> int:
        count = len(self.parameters)
        try:
            offset = operator.index(offset)           # an int, or NumPy's integers
        except TypeError:
            offset = None
        if offset is not None and 0 <= offset and offset + size <= count:
            return offset
        if reader == "word":
            raise IndexError(f"launch.word({given!r}): the launch's parameters are words 0..{count // 8 - 1} "
                             f"({count} bytes from the parameter base)")
        raise IndexError(f"launch.{reader}({given!r}): the launch's parameters are bytes 0..{count - 1} from the "
                         f"parameter base, and a {reader} is 4 of them at a byte offset 0..{count - 4}")


Kernel = Callable[[Memory, LaunchContext], None]


@dataclass
class Outputs:
    files: dict                 # file name -> bytes (predictions, result, checkpoint-out payloads)
    publications: list          # (step, envelope bytes) per checkpoint published, in order
    stopped: bool               # a predict request ended at its operation step


# host_runtime.c RT_RECORD_BIG_ENDIAN: a word that is its expected value with its bytes reversed
RECORD_BIG_ENDIAN = " (its bytes reversed: the record was written big-endian; write it little-endian)"


def shown_word(w: int, width: int, word_format: str) -> str:
    """A record word's bits `w` as a refusal prints it, read as its check's format (runtime_c's
    shown_word): unsigned and signed (two's complement) in decimal; binary32 as C's "%.9g" and
    binary64 as "%.17g" (enough digits to read back to the same bits: IEEE 754-2008 5.12.2),
    infinities as inf and -inf, a NaN as nan with its bits (0x7fc00001)."""
    if word_format == "signed":
        return str(w - (1 << (8 * width)) if w >> (8 * width - 1) else w)
    if word_format in ("binary32", "binary64"):
        wide = word_format == "binary64"
        x = struct.unpack("<d" if wide else "<f", w.to_bytes(8 if wide else 4, "little"))[0]
        if x != x:
            return f"nan (0x{w:0{16 if wide else 8}x})"
        if x in (float("inf"), float("-inf")):
            return "inf" if x > 0 else "-inf"
        return ("%.17g" if wide else "%.9g") % x
    return str(w)


def word_below(w: int, bound: int, width: int, word_format: str) -> bool:
    """A below check's test (runtime_c's word_below): the word is less than the bound, both read as
    the check's format -- binary words as IEEE 754 compares them (a NaN is below nothing and
    nothing is below a NaN, -0 equals 0: IEEE 754-2008 5.11), integers as numbers."""
    return word_value(w, width, word_format) < word_value(bound, width, word_format)


def words_same(w: int, width: int, other: int, other_width: int, word_format: str) -> bool:
    """A same check's test (runtime_c's words_same): a signed word and its other, each sign-extended
    from its own width, are the same number (a 1-byte -1 and a 2-byte -1 are); other words are the
    same bits (zero-extended: the same unsigned natural; a binary word's two runs are as wide)."""
    if word_format == "signed":
        return word_value(w, width, "signed") == word_value(other, other_width, "signed")
    return w == other


def check_record(checks: tuple[RecordCheck, ...], record_bytes: int, data: bytes, path) -> None:
    """The plan's input checks, in order, as runtime_c's rt_record_verify applies them, refused
    (BadInputRecord, exit 3) in its words, `path` shown as it shows it (safe_io.shown)."""
    from ..certify.limits import shown as shown_count, shown_bytes
    from .safe_io import shown

    path = shown(path)
    if len(data) != record_bytes:       # the sizes grouped by threes, as rt_grouped groups them
        raise BadInputRecord(path, "size", f"{shown_bytes(len(data))}, expected exactly {shown_count(record_bytes)}"
                             f"{' (truncated)' if len(data) < record_bytes else ''}")

    def word(at: int, width: int) -> int:
        return int.from_bytes(data[at:at + width], "little")

    # Every refusal names the byte of the file its word lies at (offset + i x stride; a same check
    # the other word's too), as rt_record_verify does: "token 3 at byte 1036 is 70000, not below 50257".
    for c in checks:
        what = printable(c.what)      # one line: a control character as '?' (rt_record_verify)
        if c.kind == "bytes":
            if data[c.offset:c.offset + len(c.data)] != c.data:
                shown = "".join(chr(b) if 32 <= b < 127 else "?" for b in c.data[:40])
                raise BadInputRecord(path, what, f"{what} at byte {c.offset} is not '{shown}'")
            continue
        count = 1 if c.kind == "word" else c.count
        for i in range(count):
            at = c.offset + i * c.stride
            w = word(at, c.width)
            if c.kind == "word" and w != c.value:      # the value's bytes reversed: a big-endian writer's
                swapped = c.width > 1 and int.from_bytes(w.to_bytes(c.width, "little"), "big") == c.value
                raise BadInputRecord(path, what, f"{what} at byte {at} is {shown_word(w, c.width, c.format)}, expected "
                                                   f"{shown_word(c.value, c.width, c.format)}"
                                                   f"{RECORD_BIG_ENDIAN if swapped else ''}")
            if c.kind == "below" and not word_below(w, c.value, c.width, c.format):
                raise BadInputRecord(path, what, f"{what} {i} at byte {at} is {shown_word(w, c.width, c.format)}, "
                                                   "not below "
                                                   f"{shown_word(c.value, c.width, c.format)}")
            if c.kind == "index" and w != i:
                raise BadInputRecord(path, what, f"{what} {i} at byte {at} names {w} (the {count} must list "
                                                   f"0..{count - 1} in order)")
            if c.kind == "same":
                other_at = c.other + i * c.other_stride
                other = word(other_at, c.other_width)
                if not words_same(w, c.width, other, c.other_width, c.format):
                    raise BadInputRecord(path, what, f"{what} {i} at byte {at} is {shown_word(w, c.width, c.format)}, "
                                                       f"but the word at byte {other_at} says "
                                                       f"{shown_word(other, c.other_width, c.format)}")


def fresh_payload(plan) -> bytes:
    """The plan's initializers, one per checkpoint chunk (runtime_c's rt_init_chunk)."""
    contract = plan.checkpoint
    chunks = []
    for init in plan.host.initializers:
        if init.kind == "zero":
            chunks.append(bytes(contract.chunk_bytes))
            continue
        chunks.append(splitmix64_chunk(init.seed, init.shift, init.center, init.denominator, contract.chunk_bytes))
    return b"".join(chunks)


def splitmix64_chunk(seed: bytes, shift: int, center: int, denominator: int, size: int) -> bytes:
    """runtime_c/host_runtime.c rt_init_chunk for a SplitMix64 initializer over a chunk of `size`
    bytes: its size // 4 binary32 elements (the bytes past them it leaves alone, as C does), the
    stream starting afresh from FNV-1a-64 of `seed`; element i is
    (binary32)((binary64)((z_i >> shift) - center) / denominator), the difference a signed 64-bit
    integer (docs/formats.md, docs/host-steps.md).  The one Python copy: the plan host's reference
    runner and simulator (fresh_payload) and the native request's (reference.native_request)
    both fill through it.  The elements are drawn SPLITMIX64_BLOCK at a time into the one output
    buffer: a 1 GiB chunk (docs/limits.md's largest payload) drawn at once took ten times its size
    in NumPy temporaries (probe s41 fillunify)."""
    count = size // 4
    state = np.uint64(_fnv1a64(seed))
    out = np.empty(count, dtype="<f4")
    for start in range(0, count, SPLITMIX64_BLOCK):
        index = np.arange(start + 1, min(count, start + SPLITMIX64_BLOCK) + 1, dtype=np.uint64)
        with np.errstate(over="ignore"):
            z = state + index * np.uint64(0x9E3779B97F4A7C15)
            z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
            z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
            z = z ^ (z >> np.uint64(31))
        u = (z >> np.uint64(shift)).astype(np.int64)
        out[start:start + len(index)] = (u - np.int64(center)).astype(np.float64) / float(denominator)
    return out.tobytes()


SPLITMIX64_BLOCK = 1 << 16     # elements drawn at once by splitmix64_chunk (its temporaries ~2.5 MiB)


def _fnv1a64(data: bytes) -> int:
    h = 0xcbf29ce484222325
    for byte in data:
        h = ((h ^ byte) * 0x100000001b3) & 0xFFFFFFFFFFFFFFFF
    return h


@dataclass(frozen=True)
class WriteExtents:
    """The bytes a launch's kernel contract lets it write: `spans` (sorted, merged [start, end)),
    and each declared write pointer's extent as a message names it."""

    spans: tuple
    described: tuple


def write_extents(plan, contracts: dict) -> list:
    """Per launch: its WriteExtents by its kernel's contract, as the certifier reads the contract
    (bobc.certify.footprints), or None where that is unknown (no contract: nothing is checked)."""
    if not contracts:
        return [None] * len(plan.program.launches)
    from ..certify.footprints import launch_footprints
    from ..certify.pointers import declared_pointers, pointer_extent
    from ..nvidia.encode import plan_parameter_base

    argument_word = plan_parameter_base(plan.program) // 8
    out = []
    for index, footprint in enumerate(launch_footprints(plan, contracts)):
        if footprint is None:
            out.append(None)
            continue
        launch = plan.program.launches[index]
        contract = contracts.get(plan.program.regions[launch.region].identity)
        described = []
        for pointer in declared_pointers(index, launch, contract, argument_word):
            if not pointer.argument.writes or pointer.address is None:
                continue
            for offset in pointer.offsets or ():
                address = pointer.address + offset
                _, extent, _ = pointer_extent(plan.arena.globals, pointer.argument, address, pointer.words)
                described.append(f"[{address:#x}, {address + (extent or 0):#x}) (argument {pointer.argument.index}"
                                 f"{', ' + pointer.argument.what if pointer.argument.what else ''}; "
                                 f"{_contract_line(contract, pointer.argument.index)})")
        out.append(WriteExtents(footprint.writes, tuple(described)))
    return out


def _contract_line(contract, argument: int) -> str:
    """`source:line` of the contract's `//@ param ARGUMENT` line, as the contract parser found it
    (the source alone for an argument no line declared)."""
    from ..errors import shown_path

    declared = contract.argument(argument)
    source = shown_path(contract.source)    # as every other message shows a source (errors.shown_path)
    return f"{source}:{declared.line}" if declared is not None and declared.line else source


def _where(error: BaseException) -> str:
    """` (FILE:LINE)`: the innermost frame of `error`'s traceback outside bobc (the user's
    kernel), or nothing."""
    import traceback
    frames = traceback.extract_tb(error.__traceback__)
    where = next((f"{f.filename}:{f.lineno}" for f in reversed(frames)
                  if "/bobc/" not in f.filename.replace("\\", "/")), "")
    return f" ({where})" if where else ""


def _kernel_file(kernel) -> str:
    """The file that defines `kernel` (its code's file, shown as bobc shows paths), else "its file":
    the --kernels file or the plan's own reference_kernels.py (no --kernels given), or a module that
    file imports -- not "the --kernels file" when none was given (probe s36 exitcodes finding 6)."""
    from ..errors import shown_path

    code = getattr(kernel, "__code__", None)
    return shown_path(code.co_filename) if code is not None else "the file that defines it"


def _resident_of(plan, address: int) -> str:
    for r in plan.arena.globals:
        if r.address <= address < r.address + r.size:
            return f"at {address:#x}, in {r.name}, {address - r.address:,} bytes in"
    return f"at {address:#x}, in no resident"


def missing_kernels(plan, kernels) -> list[str]:
    """The kernels (region identities) the plan's launches run that `kernels` does not define, sorted."""
    return sorted({plan.program.regions[l.region].identity for l in plan.program.launches} - set(kernels))


class ReferenceHost:
    """One invocation of a plan's host on the reference runner."""

    def __init__(self, plan, kernels: dict[str, Kernel], publish_checkpoint: Callable[[bytes], None] | None = None,
                 publish_output: Callable[[str, bytes], None] | None = None, contracts: dict | None = None):
        if plan.host is None:
            raise ReferenceHostError("the plan declares no native host")
        self.plan = plan
        self.kernels = kernels
        self.publish_checkpoint = publish_checkpoint or (lambda data: None)
        self.publish_output = publish_output or (lambda name, data: None)
        from ..nvidia.encode import plan_parameter_base
        base = plan_parameter_base(plan.program) // 8
        self.parameters = []
        for launch in plan.program.launches:
            block = bytearray(max(0, launch.parameter_bytes - 8 * base))
            for p in launch.patches:
                if p.word >= base:
                    struct.pack_into("<Q", block, 8 * (p.word - base), p.value)
            self.parameters.append(block)
        missing = missing_kernels(plan, kernels)
        if missing:
            raise ReferenceHostError(f"no NumPy implementation is registered for kernel(s) {', '.join(missing)}")
        if contracts is None:
            from ..certify import certified_contracts
            contracts = certified_contracts(plan)
        self.write_extents = write_extents(plan, contracts or {})

    # ---- device ----
    def _issue(self, memory: Memory, submission: int) -> None:
        plan = self.plan
        for index in plan.program.submissions[submission].launches:
            launch = plan.program.launches[index]
            region = plan.program.regions[launch.region]
            kernel = self.kernels.get(region.identity)
            if kernel is None:
                raise ReferenceHostError(f"launch {index} runs kernel {region.identity}, which the reference kernels "
                                         f"do not define (they define {', '.join(sorted(self.kernels)) or 'none'})")
            writes = self.write_extents[index]
            memory.guard = (writes.spans, []) if writes is not None else None
            try:
                kernel(memory, LaunchContext(index, launch, bytes(self.parameters[index])))
            except BobcError as error:        # a refusal inside the kernel (a view of no buffer): where
                error.message = f"the reference kernel {region.identity} failed at launch {index}" \
                                f"{_where(error)}: {error.message}"
                error.args = (error.message,)
                error.hint = error.hint or f"fix the kernel in {_kernel_file(kernel)}; nothing was published"
                raise
            except MemoryError:               # this process out of memory: said as that by cli, not the kernel's
                raise
            except (Exception, SystemExit) as error:    # the user's NumPy kernel: where it failed, not a
                from ..errors import descriptors_exhausted, raised_text      # traceback nor its sys.exit()

                if isinstance(error, OSError) and descriptors_exhausted(error) is not None:
                    raise descriptors_exhausted(error) from None     # the limit's (ulimit -n), not the kernel's
                raise ReferenceHostError(f"the reference kernel {region.identity} failed at launch {index}"
                                         f"{_where(error)}: {raised_text(error)}",
                                         hint=f"fix the kernel in {_kernel_file(kernel)}; nothing was published") from None
            finally:
                guard, memory.guard = memory.guard, None
            if guard is not None and guard[1]:
                self._held_to_contract(memory, index, region.identity, kernel, writes, guard[1])
        self.issued += 1

    def _held_to_contract(self, memory: Memory, index: int, identity: str, kernel, writes, views) -> None:
        """Refuse a kernel that changed bytes outside its launch's declared write extents (the
        views it took that reach outside them, compared with their bytes before it ran), as
        `bobc sim` refuses the SASS that does."""
        changed: list[int] = []
        for address, before in views:
            now = np.frombuffer(memory.read(address, len(before)), dtype=np.uint8)
            moved = np.flatnonzero(now != np.frombuffer(before, dtype=np.uint8))
            if not moved.size:
                continue
            inside = np.zeros(moved.size, dtype=bool)
            for a, b in writes.spans:
                inside |= (moved >= a - address) & (moved < b - address)
            changed.extend(int(address + m) for m in moved[~inside])
        if not changed:
            return
        changed = sorted(set(changed))
        from ..certify.limits import shown_bytes
        first, last = changed[0], changed[-1]
        code = getattr(kernel, "__code__", None)
        defined = f" ({code.co_filename}:{code.co_firstlineno})" if code is not None else ""
        allowed = "; ".join(writes.described) or "nothing"
        raise ReferenceHostError(
            f"the reference kernel {identity}{defined} wrote bytes its contract does not say it writes at "
            f"launch {index}: {shown_bytes(len(changed))} in [{first:#x}, {last + 1:#x}) changed (the first "
            f"{_resident_of(self.plan, first)}); its contract lets it write {allowed}",
            hint="bobc sim holds the kernel's SASS to the same contract: correct the NumPy kernel in "
                 f"{_kernel_file(kernel)}, or the //@ param line and the plan; nothing was published")

    # ---- the invocation ----
    def run(self, operation: str, record: bytes, checkpoint: tuple[bytes, int] | None, record_path="input"):
        plan, host = self.plan, self.plan.host
        if operation not in ("train", "predict"):
            raise ReferenceHostError(f"unknown operation {operation!r} (train or predict)")
        check_record(host.request.input_checks, host.request.input_record_bytes, record, record_path)
        payload, step = checkpoint if checkpoint is not None else (fresh_payload(plan), 0)
        memory = Memory.for_plan(plan)
        out = {name: bytearray() for name in FILE_NAMES.values()}
        closed, publications = set(), []
        self.issued, gp_put, cursor, stat, stamps, identity = 0, 0, 0, bytearray(), {}, b""
        cursor_from = None          # (step, scale, base) of the last CursorFromCheckpoint (messages)
        published = published_step = 0
        steps = lower(plan)
        # an interval's checkpoint is published when its interval ends; the request's last
        # waits for the other outputs (all together, the checkpoint last), as runtime_c does
        total = publication_count(steps, operation)
        commands = None             # the Commands steps' machine (state, slots), from the first one
        for index, s in enumerate(steps):
            v = s.values
            k = s.name
            if k == "submit":
                for index in range(gp_put, v["gp_put"]):
                    self._issue(memory, index)
                gp_put = max(gp_put, v["gp_put"])
            elif k == "reissue":
                self._issue(memory, v["piece"])
            elif k == "scalar_fill":
                fill = host.fills[v["fill"]]
                try:
                    encoded = fill.encode(step + fill.step)
                except FillValueError as error:     # the C host's internal error, exit 1, in its words
                    raise ReferenceHostError(fill_refusal(v["fill"], step, fill.step, str(error))) from None
                self.parameters[fill.launch][fill.offset:fill.offset + 4] = encoded
            elif k in ("read", "read_at_cursor", "read_cyclic"):
                if k == "read" and v["file"] == "checkpoint-in":
                    source = payload
                else:
                    if k != "read_cyclic" and v["file"] != "input":
                        raise ReferenceHostError(f"a {k} of {v['file']}, which is an output")
                    source = record
                offset = (v["offset"] if k == "read" else cursor + v["delta"] if k == "read_at_cursor"
                          else v["offset"] + (v["index"] % v["count"]) * v["record_bytes"])
                if offset + v["extent"] > len(source):
                    raise read_past_input(k, v["extent"], offset, len(source), cursor_from)
                memory.write(v["host"], source[offset:offset + v["extent"]])
            elif k in ("write", "write_at"):
                data = memory.read(v["host"], v["extent"])
                o = out[v["file"]]
                at = len(o) if k == "write" else v["offset"]
                if at + len(data) > len(o):
                    o.extend(bytes(at + len(data) - len(o)))
                o[at:at + len(data)] = data
            elif k == "write_stat":
                out[v["file"]] += stat
            elif k == "write_status":
                out[v["file"]] += struct.pack("<3Q", published_step if published else step, self.issued, published)
            elif k == "write_timestamps":
                count = max(stamps) + 1 if stamps else 0
                out[v["file"]] += b"".join(struct.pack("<Q", stamps.get(i, 0)) for i in range(count))
            elif k == "record_stat":
                data = memory.read(v["host"], v["extent"])
                end = v["stat_offset"] + v["extent"]
                if end > len(stat):
                    stat.extend(bytes(end - len(stat)))
                stat[v["stat_offset"]:end] = data
            elif k == "stamp":
                stamps[v["which"]] = self.issued
            elif k == "fill":
                memory.write(v["host"], v["payload"])
            elif k == "assert_word":
                word = struct.unpack("<I", memory.read(v["host"], 4))[0]
                if word != v["expected"]:
                    raise AssertedWordDiffers(f"{printable(v['identity'])}: the word at "
                                             f"{v['host']:#x} is {word}, expected {v['expected']}")
            elif k == "bind_input_identity":
                identity = record[v["offset"]:v["offset"] + v["extent"]]
            elif k == "write_input_identity":
                out["result"] += identity
            elif k in ("begin_checkpoint", "checkpoint_begin"):
                out["checkpoint-out"] = bytearray()
            elif k == "operation":
                if operation == "predict":
                    return self._finish(out, closed, publications, payload, step, stopped=True)
            elif k in ("sync", "data_sync"):
                pass
            elif k == "close":
                closed.add(v["file"])       # finished; published with the others at the end
            elif k == "commands":
                if commands is None:
                    commands = PlanCommandsMachine(memory)
                try:
                    commands.run_step(v["commands"], index)
                except CommandsStopped as stop:
                    raise CommandsFailed(stop.status, str(stop)) from None   # its bytes as the C host prints them
            elif k == "cursor_from_checkpoint":
                cursor = v["base"] + step * v["scale"]
                cursor_from = (step, v["scale"], v["base"])
            elif k == "cursor_advance":
                cursor += v["bytes"]
            elif k == "checkpoint_publish":
                data = bytes(out["checkpoint-out"])
                if len(data) != plan.checkpoint.payload_bytes:
                    raise wrote_other_than_the_contract(len(data), plan.checkpoint.payload_bytes)
                published, published_step = published + 1, step + v["updates"]
                env = envelope.encode(plan.checkpoint, published_step, data)
                publications.append((published_step, env))
                if published < total:
                    self.publish_checkpoint(env)
            else:
                raise ReferenceHostError(f"the reference host has no meaning for step {k}")
        return self._finish(out, closed, publications, payload, step, stopped=False)

    def _finish(self, out, closed, publications, payload, step, stopped):
        for name in ("predictions", "result"):
            self.publish_output(name, bytes(out[name]))
        if not publications:        # a request that trained nothing hands its state on unchanged
            publications.append((step, envelope.encode(self.plan.checkpoint, step, payload)))
        # the last publication is the caller's to publish, with the other outputs
        return Outputs({name: bytes(data) for name, data in out.items()}, publications, stopped)
