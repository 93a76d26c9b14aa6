"""The typed host plan: what a plan's NvidiaPlanHost says about the native host.

Each step kind is declared once, here, as data (STEP_KINDS): the spec
constructor it comes from (specs/Platform/Linux/Nvidia/PlanHost.bob), its
fields in the constructor's order, and which of them travel to the C
interpreter with which C type.  Everything else is derived from this table:
plan.extract reads the constructor's fields by it, the step dataclasses are
made from it, and bobc.host.steps_c renders runtime_c/plan_steps.h (the C
enum, the per-kind structs and the interpreter's dispatch) from it -- a test
checks the committed header is the rendering.

A field whose `c_type` is None does not reach the C host: strides and
repeat bodies are resolved by the generator, which unrolls repeats.
"""
from __future__ import annotations

import math
import struct
from dataclasses import dataclass, field, make_dataclass
from fractions import Fraction
from typing import ClassVar

from ..errors import shown_plan_text

# ---- the step table ----


@dataclass(frozen=True)
class StepField:
    name: str                 # the Python attribute and the C member
    spec: str                 # the constructor's field in PlanHost.bob
    kind: str                 # "nat", "file" (NvidiaPlanHostFile) or "steps" (a nested list)
    c_type: str | None        # the C member's type; None: resolved by the generator
    stride_of: str | None = None   # for a stride: the field it moves per repeat iteration


@dataclass(frozen=True)
class StepKind:
    name: str                 # the Python and C name (BOBC_STEP_<NAME>)
    constructor: str | None   # NvidiaPlanHostSteps constructor; None: emitted by the generator only
    fields: tuple[StepField, ...]
    meaning: str              # one line; docs/host-steps.md says more
    interpreted: bool = True  # False: resolved by the generator (never reaches C)

    @property
    def c_fields(self) -> tuple[StepField, ...]:
        return tuple(f for f in self.fields if f.c_type is not None)


def _f(name, spec, kind="nat", c_type="uint64_t", stride_of=None) -> StepField:
    return StepField(name, spec, kind, c_type, stride_of)


_P = "nvidiaPlanHost"

def _kind(name, fields, meaning, interpreted=True, constructor=None) -> StepKind:
    camel = "".join(part.capitalize() for part in name.split("_"))
    return StepKind(name, constructor or "NvidiaPlanHostStep" + camel, tuple(fields), meaning, interpreted)


# the constructors of NvidiaPlanHostSteps in the family's order (specs/Platform/Linux/Nvidia/PlanHost.bob)
STEP_KINDS: tuple[StepKind, ...] = (
    _kind("submit", [_f("gp_put", _P + "SubmitGPPut"), _f("stride", _P + "SubmitStride", c_type=None, stride_of="gp_put")],
          "issue the ring image's entries up to gp_put and wait for each one's semaphore"),
    _kind("repeat", [_f("count", _P + "RepeatCount", c_type=None),
                     _f("body", _P + "RepeatBody", kind="steps", c_type=None)],
          "the body count times (strides move with the innermost repeat)", interpreted=False),
    _kind("read", [_f("file", _P + "ReadFile", kind="file", c_type="int32_t"), _f("host", _P + "ReadHost"),
                   _f("extent", _P + "ReadExtent"), _f("offset", _P + "ReadOffset"),
                   _f("stride", _P + "ReadStride", c_type=None, stride_of="offset"),
                   _f("tolerate_empty", _P + "ReadTolerateEmpty", c_type="uint32_t")],
          "copy extent bytes at offset of an input file to host"),
    _kind("read_cyclic", [_f("host", _P + "ReadCyclicHost"), _f("extent", _P + "ReadCyclicExtent"),
                          _f("offset", _P + "ReadCyclicOffset"), _f("record_bytes", _P + "ReadCyclicRecordBytes"),
                          _f("count", _P + "ReadCyclicCount"), _f("index", _P + "ReadCyclicIndex"),
                          _f("index_stride", _P + "ReadCyclicIndexStride", c_type=None, stride_of="index")],
          "copy extent bytes of the input's record (index mod count) to host"),
    _kind("write", [_f("file", _P + "WriteFile", kind="file", c_type="int32_t"), _f("host", _P + "WriteHost"),
                    _f("extent", _P + "WriteExtent")],
          "append extent bytes at host to an output"),
    _kind("write_at", [_f("file", _P + "WriteAtFile", kind="file", c_type="int32_t"), _f("host", _P + "WriteAtHost"),
                       _f("extent", _P + "WriteAtExtent"), _f("offset", _P + "WriteAtOffset")],
          "write extent bytes at host over an output from offset"),
    _kind("write_stat", [_f("file", _P + "WriteStatFile", kind="file", c_type="int32_t")],
          "append the stat block to an output"),
    _kind("write_status", [_f("file", _P + "WriteStatusFile", kind="file", c_type="int32_t")],
          "append the status (step reached, ring entries issued, checkpoints published; u64 each)"),
    _kind("write_timestamps", [_f("file", _P + "WriteTimestampsFile", kind="file", c_type="int32_t")],
          "append the stamps (u64 GPU nanoseconds per slot) to an output"),
    _kind("record_stat", [_f("host", _P + "RecordStatHost"), _f("stat_offset", _P + "RecordStatOffset"),
                          _f("extent", _P + "RecordStatExtent")],
          "copy extent bytes at host into the stat block at stat_offset"),
    _kind("stamp", [_f("gp_put", _P + "StampGPPut"), _f("stride", _P + "StampStride", c_type=None, stride_of="gp_put"),
                    _f("which", _P + "StampWhich")],
          "record ring entry gp_put's last semaphore release time in stamp slot which"),
    _kind("fill", [_f("host", _P + "FillHost"), _f("payload", _P + "FillPayload", kind="bytes", c_type="bytes")],
          "write payload at host"),
    _kind("assert_word", [_f("identity", _P + "AssertWordIdentity", kind="bytes", c_type="bytes"),
                          _f("host", _P + "AssertWordHost"), _f("expected", _P + "AssertWordExpected")],
          "refuse to go on unless the u32 at host is expected"),
    _kind("bind_input_identity", [_f("offset", _P + "BindInputIdentityOffset"),
                                  _f("extent", _P + "BindInputIdentityExtent")],
          "the input's bytes [offset, offset + extent) are its identity"),
    _kind("write_input_identity", [], "append the bound input identity to the result"),
    _kind("begin_checkpoint", [], "the output checkpoint's payload starts empty"),
    _kind("operation", [], "a predict request ends here; a train request goes on"),
    _kind("sync", [_f("file", _P + "SyncFile", kind="file", c_type="int32_t")],
          "a published output reaches its disk (publication syncs; a no-op before it)"),
    _kind("data_sync", [_f("file", _P + "DataSyncFile", kind="file", c_type="int32_t")], "as sync"),
    _kind("close", [_f("file", _P + "CloseFile", kind="file", c_type="int32_t")],
          "publish an output now, atomically; nothing more is written to it"),
    _kind("reissue", [_f("gp_put", _P + "ReissueGPPut"),
                      _f("stride", _P + "ReissueStride", c_type=None, stride_of="gp_put"),
                      _f("piece", _P + "ReissuePiece"),
                      _f("piece_stride", _P + "ReissuePieceStride", c_type=None, stride_of="piece"),
                      _f("entry", _P + "ReissueEntry"),
                      _f("entry_stride", _P + "ReissueEntryStride", c_type=None, stride_of="entry")],
          "issue ring entry `entry` again (wrapping the ring) and wait for submission piece's semaphore"),
    _kind("commands", [_f("commands", _P + "CommandsValue", kind="commands", c_type="bytes")],
          "run native commands (a program's canonical bytes) on the host's buffers, state and slots"),
    _kind("cursor_from_checkpoint", [_f("base", _P + "CursorBase"), _f("scale", _P + "CursorScale")],
          "the input cursor starts at base + the input checkpoint's step x scale"),
    _kind("read_at_cursor", [_f("file", _P + "ReadAtCursorFile", kind="file", c_type="int32_t"),
                             _f("host", _P + "ReadAtCursorHost"), _f("extent", _P + "ReadAtCursorExtent"),
                             _f("delta", _P + "ReadAtCursorDelta")],
          "copy extent bytes at the cursor + delta of an input to host"),
    _kind("cursor_advance", [_f("bytes", _P + "CursorAdvanceBytes")], "move the cursor on by bytes"),
    _kind("checkpoint_begin", [], "the output checkpoint's payload starts empty"),
    _kind("checkpoint_publish", [_f("updates", _P + "CheckpointPublishUpdates"),
                                 _f("invocations", _P + "CheckpointPublishInvocations")],
          "finish the output checkpoint (step = input's + updates) and publish it atomically"),
    StepKind("scalar_fill", None, (_f("fill", "fill", c_type="uint32_t"),),
             "compute the plan's scalar fill number `fill` and write it into its launch's parameters"),
)

STEP_KIND = {k.name: k for k in STEP_KINDS}
STEP_BY_CONSTRUCTOR = {k.constructor: k for k in STEP_KINDS if k.constructor}
INTERPRETED = tuple(k for k in STEP_KINDS if k.interpreted)


class Step:
    """Base of the step dataclasses below; `kind` is the table row."""

    kind: ClassVar[StepKind]


def _camel(name: str) -> str:
    return "".join(part.capitalize() for part in name.split("_"))


def _step_class(kind: StepKind):
    types = {"nat": int, "file": str, "steps": tuple, "bytes": bytes, "commands": bytes}
    # `at`: where the step was written (bobc.plan.extract), for the certifier's messages; kept
    # out of equality, hashing and repr
    cls = make_dataclass(_camel(kind.name) + "Step",
                         [(f.name, types[f.kind]) for f in kind.fields]
                         + [("at", object, field(default=None, compare=False, repr=False))],
                         bases=(Step,), frozen=True, namespace={"kind": kind, "__doc__": kind.meaning})
    cls.__module__ = __name__
    return cls


STEP_CLASSES: dict[str, type] = {k.name: _step_class(k) for k in STEP_KINDS}
globals().update({cls.__name__: cls for cls in STEP_CLASSES.values()})


def make_step(name: str, **values) -> Step:
    return STEP_CLASSES[name](**values)


# ---- files and memories ----

# NvidiaPlanHostFile constructor -> the file's name in the host and its C code
# (runtime_c/plan_steps.h enum bobc_file, generated from this table)
FILES: tuple[tuple[str, str], ...] = (
    ("NvidiaPlanHostInput", "input"),
    ("NvidiaPlanHostCheckpointIn", "checkpoint-in"),
    ("NvidiaPlanHostCheckpointOut", "checkpoint-out"),
    ("NvidiaPlanHostPredictions", "predictions"),
    ("NvidiaPlanHostResult", "result"),
)
FILE_NAMES = dict(FILES)
OUTPUT_FILES = ("checkpoint-out", "predictions", "result")
CLOSABLE_FILES = ("predictions", "result")      # Close: the outputs published with the request
# the host's stat block (RecordStat, WriteStat) and stamp table (Stamp, WriteTimestamps):
# runtime_c/plan_host.c BOBC_STAT_BYTES, BOBC_STAMP_SLOTS
STAT_BYTES = 4096
STAMP_SLOTS = 4096
# the most bytes of an AssertWord's identity: the C host shows it in its one message line
# (RT_ERR_BYTES 512, runtime_c/host_runtime.h) through a name buffer of RT_ERR_BYTES - 128 bytes,
# its NUL included (runtime_c/plan_host.c step_assert_word), and would cut a longer one where
# `bobc run --reference` and `bobc sim` print it whole; the certifier refuses a longer one
ASSERT_IDENTITY_BYTES = 512 - 128 - 1
FILE_CODES = {name: i + 1 for i, (_, name) in enumerate(FILES)}
INPUT_FILES = ("input", "checkpoint-in")

MEMORIES = {
    "NvidiaPlanHostSystemMemory": "system",
    "NvidiaPlanHostVideoMemory": "video",
    "NvidiaPlanHostGPUCachedSystemMemory": "gpu-cached-system",
}


# ---- host-computed scalars ----

# NvidiaPlanHostScalar constructor -> (name, operand count); the C interpreter's
# op codes (enum bobc_scalar_op in plan_steps.h) follow this order, from 1
SCALAR_OPS: tuple[tuple[str, str, int], ...] = (
    ("NvidiaPlanHostScalarConstant", "constant", 0),
    ("NvidiaPlanHostScalarStep", "step", 0),
    ("NvidiaPlanHostScalarAdd", "add", 2),
    ("NvidiaPlanHostScalarSubtract", "subtract", 2),
    ("NvidiaPlanHostScalarMultiply", "multiply", 2),
    ("NvidiaPlanHostScalarDivide", "divide", 2),
    ("NvidiaPlanHostScalarPower", "power", 2),
    ("NvidiaPlanHostScalarSquareRoot", "sqrt", 1),
)
SCALAR_OP_CODES = {name: i + 1 for i, (_, name, _) in enumerate(SCALAR_OPS)}
# the most values a scalar's postfix program holds at once: the C host evaluates it on a stack of
# this many (runtime_c/plan_fill.h BOBC_SCALAR_STACK) and refuses a deeper one at every run, so
# plan extraction refuses it (Scalar.stack_depth)
SCALAR_STACK = 32
# the most terms (constants, steps, operations) of a scalar's postfix program: the C host holds no
# bound of its own (its bobc_fill.term_count is a uint32_t), but a value the language shares is a
# tree here, 2^n terms from n lines of plan, which extraction would walk for hours and the generated
# C hold; an optimizer's scalars take about 15 (specs/Platform/Linux/Nvidia/PlanHostAdamW.bob)
SCALAR_TERMS = 1024
# the most operations nested one in another's operand along one path of a scalar (an operation's
# operand an operation, and so on): extraction walks the value recursively, a few frames a level;
# an optimizer's scalars nest a few deep (docs/limits.md)
SCALAR_NESTING = 64
ENCODINGS = {"NvidiaPlanHostEncodeBinary32": "binary32", "NvidiaPlanHostEncodeWord32": "word32"}


@dataclass(frozen=True)
class Scalar:
    """NvidiaPlanHostScalar: binary64 arithmetic over constants and the global step t."""

    op: str
    operands: tuple["Scalar", ...] = ()
    value: float = 0.0        # a constant's binary64 value

    def evaluate(self, t: int) -> float:
        """Its value at global step `t`: its postfix program (the C host's form of it) through
        scalar_value, the one evaluator the reference host and the simulator share."""
        return scalar_value(self.postfix(), t)

    def stack_depth(self) -> int:
        """The most values its postfix program holds at once (C's eval_at stack): a right operand
        is evaluated above its left one's value."""
        if not self.operands:
            return 1
        return max(i + operand.stack_depth() for i, operand in enumerate(self.operands))

    def postfix(self) -> list[tuple[str, float]]:
        """The C interpreter's program: operands first, then the operation."""
        out = []
        for operand in self.operands:
            out += operand.postfix()
        out.append((self.op, self.value))
        return out


class ScalarProgramError(ValueError):
    """A scalar program that leaves `values` values on its stack, not one (plan_fill.c eval_at's
    "a scalar program leaves N values"); a Scalar's own postfix always leaves one."""

    def __init__(self, values: int):
        super().__init__(f"a scalar program leaves {values} values, not one")
        self.values = values


def c_pow():
    """The C library's pow(double, double), which runtime_c/plan_fill.c's `power` calls (the C host
    is linked with -lm): bound once through ctypes, from libm (glibc's libm.so.6, else whatever
    library holds it: the process's own symbols, find_library("m"))."""
    global _C_POW
    if _C_POW is None:
        import ctypes
        import ctypes.util

        for name in ("libm.so.6", None, ctypes.util.find_library("m")):
            try:
                function = ctypes.CDLL(name).pow
            except (OSError, AttributeError, TypeError):
                continue
            function.restype = ctypes.c_double
            function.argtypes = (ctypes.c_double, ctypes.c_double)
            _C_POW = function
            break
        else:
            raise RuntimeError("no C library pow to compute a fill's power with (the C host's libm)")
    return _C_POW


_C_POW = None


def scalar_value(terms, t: int) -> float:
    """A fill's scalar program in postfix ((operation name, constant) per term: Scalar.postfix, the
    C host's bobc_fill terms) at global step `t`, in binary64, each operation rounded once, as
    runtime_c/plan_fill.c bobc_scalar_eval computes it: IEEE results, never an exception (x / 0 is
    an infinity, 0 / 0, sqrt(-1) and pow(-8, 0.5) the NaN the machine gives, -nan on x86).  `power`
    is the C library's own pow (c_pow), which the C host calls: NumPy's np.power is not it (probe
    s41 fillunify: on an AVX-512 machine 1 in 40 results a unit in the last place off).  The rest is
    Python's float, which is C's double: + - * are the one IEEE operation each and give an infinity
    or a NaN, never an exception; only / by a zero and sqrt below zero raise in Python, so those
    cases are taken here as IEEE 754 says (`_divide`, `_sqrt`; Python's own raised there, probe s39
    coverage2 finding 4).  No NumPy: `bobc check` evaluates word32 fills (certify/limits.py) and
    stays NumPy-free (tests/test_build_caches.py); tests/reference/test_scalar_numpy_free_s44.py
    holds it to NumPy's float64 and to the C host over random programs.  The reference host
    (Fill.encode) and the simulator (bobc.sim.invocation.fill_bytes) both evaluate through it."""
    stack: list[float] = []
    for op, value in terms:
        if op == "constant":
            stack.append(float(value))
        elif op == "step":
            stack.append(float(t))          # the exact step rounded once, as C's (double) of it
        elif op == "sqrt":
            stack.append(_sqrt(stack.pop()))
        else:
            b, a = stack.pop(), stack.pop()
            stack.append(c_pow()(a, b) if op == "power" else _divide(a, b) if op == "divide" else
                         a + b if op == "add" else a - b if op == "subtract" else a * b if op == "multiply" else
                         _no_such_op(op))
    if len(stack) != 1:
        raise ScalarProgramError(len(stack))
    return stack[0]


_INFINITY = float("inf")


def _invalid() -> float:
    """The NaN this machine's own invalid operation gives (x86: the sign bit set, -nan; 0 / 0 and
    sqrt(-1) in C give it too), computed, never a constant, so that it is the host machine's."""
    return _INFINITY - _INFINITY


def _divide(a: float, b: float) -> float:
    """a / b in IEEE 754 binary64, as C's double: Python raises ZeroDivisionError for any b == 0,
    where IEEE gives a NaN a back (the hardware's propagation, as a + b gives it), 0 / 0 the invalid
    operation's NaN, anything else an infinity signed by a's sign times b's (1 / -0 is -inf)."""
    if b != 0.0:
        return a / b
    if a != a:
        return a + b
    if a == 0.0:
        return _invalid()
    return math.copysign(_INFINITY, a) * math.copysign(1.0, b)


def _sqrt(a: float) -> float:
    """C's sqrt(a): math.sqrt (the correctly rounded IEEE square root, -0 for -0, a NaN back) where
    it answers; below zero (-inf included) Python raises ValueError and IEEE gives the invalid NaN."""
    return _invalid() if a < 0.0 else math.sqrt(a)


def _no_such_op(op):
    raise ValueError(f"a scalar term has op {op!r}, which no scalar has ({', '.join(n for _, n, _ in SCALAR_OPS)})")


@dataclass(frozen=True)
class Fill:
    """NvidiaPlanHostFillValue: `value` at global step (input step + `step`), encoded, at
    byte `offset` of launch `launch`'s kernel parameters."""

    launch: int
    offset: int
    step: int
    encoding: str             # "binary32" or "word32"
    value: Scalar
    at: object = field(default=None, compare=False, repr=False)     # field name -> where written

    @property
    def width(self) -> int:
        return 4

    def overrun(self, launch, parameter_base: int) -> str | None:
        """Why this fill's bytes are not in `launch`'s parameter block (from the plan's parameter
        base), or None: the certifier's refusal and the host generator's backstop say it alike."""
        block = launch.parameter_bytes - parameter_base
        if 0 <= self.offset <= self.offset + self.width <= block:
            return None
        return (f"writes bytes {self.offset:,}..{self.offset + self.width - 1:,} of launch {self.launch} "
                f"({shown_plan_text(launch.identity)})'s parameters, past its {block}-byte parameter block")

    def encode(self, t: int) -> bytes:
        """plan_fill.c bobc_fill_bytes: the value at global step `t`, encoded (encoded_fill)."""
        return encoded_fill(self.encoding, self.value.evaluate(t), t)


def encoded_fill(encoding: str, v: float, t: int) -> bytes:
    """plan_fill.c bobc_fill_bytes's bytes of a fill's binary64 value `v` at global step `t`: the
    nearest binary32 (an infinity past its range) or a u32; a word32 value that is no natural
    below 2^32 (negative, fractional, NaN, 2^32 or more) is FillValueError in the C host's words,
    never truncated.  The reference host and the simulator both encode through it."""
    if encoding == "binary32":
        return binary32_bytes(v)
    if not (0.0 <= v < 4294967296.0) or v != math.floor(v):
        # the C host's words, byte for byte: the value as printf's %.17g, the exact step; it names no
        # fill (its note is not in the plan's C data)
        raise FillValueError(f"a fill's value {printf_17g(v)} at step {t} is no natural below 2^32")
    return struct.pack("<I", int(v))


def binary32_bytes(v: float) -> bytes:
    """C's (float)v, little-endian (cvtsd2ss; NumPy's astype("<f4")): the nearest binary32, ties to
    even, an infinity of v's sign past binary32's range (from 2^128 - 2^103 up: struct.pack refuses
    those, OverflowError, and only those), a NaN quieted with its sign and its payload's top 23 bits
    (as the hardware does; struct's handling of NaNs differs between Python versions)."""
    if v != v:
        bits = struct.unpack("<Q", struct.pack("<d", v))[0]
        return struct.pack("<I", (bits >> 63) << 31 | 0x7FC00000 | (bits >> 29) & 0x7FFFFF)
    try:
        return struct.pack("<f", v)
    except OverflowError:
        return struct.pack("<f", math.copysign(_INFINITY, v))


def fill_refusal(index: int, input_step: int, fill_step: int, refused: str) -> str:
    """plan_fill.c bobc_fill_step_bytes's words for the ScalarFill step of the plan's fill `index`
    (NvidiaPlanHostFills, 0-based) refused with `refused` (FillValueError's line) at the input
    checkpoint's step `input_step`: the fill, the steps its step is the sum of, and what to do.  A
    fresh run's value is certified (certify/limits.py); one that fails only past some step fails only
    on a resumed run, so the host names the input checkpoint's step (probe s43 nativemsgs)."""
    dump = f"(`bobc dump` of the host shows host.plan.fills[{index}], the launch word it writes)"
    if input_step == 0:
        return (f"fill {index}: {refused} (a run from step 0, the fill's step {fill_step}); make fill {index}'s "
                f"scalar a natural below 2^32 at every step a run reaches {dump}")
    return (f"fill {index}: {refused} (the input checkpoint's step {input_step} + the fill's step {fill_step}); "
            f"resume from a checkpoint of an earlier step, or make fill {index}'s scalar a natural below 2^32 at "
            f"every step a run reaches {dump}")


class FillValueError(ValueError):
    """A word32 fill's value that is no natural below 2^32: the C host's internal error (exit 1),
    in its words (runtime_c/plan_fill.c bobc_fill_bytes)."""


def printf_17g(v: float) -> str:
    """`v` as glibc's printf("%.17g") writes it: Python's %-format is C's for finite values and
    infinities; a NaN is nan, or -nan with its sign bit set."""
    if math.isnan(v):
        return "-nan" if math.copysign(1.0, v) < 0 else "nan"
    return "%.17g" % v


# ---- the host's data ----


@dataclass(frozen=True)
class PlanBuffer:
    """NvidiaPlanHostBufferValue: a mapping at `gpu` (and `host` in the process: 0 = not mapped)."""

    name: str
    gpu: int
    host: int
    extent: int
    memory: str               # a MEMORIES value
    at: object = field(default=None, compare=False, repr=False)     # field name -> where written


# NvidiaPlanHostRecordCheck constructor -> kind (enum rt_check_kind in host_runtime.h, from 1)
RECORD_CHECKS: tuple[tuple[str, str], ...] = (
    ("NvidiaPlanHostCheckBytes", "bytes"),
    ("NvidiaPlanHostCheckWord", "word"),
    ("NvidiaPlanHostCheckBelow", "below"),
    ("NvidiaPlanHostCheckIndex", "index"),
    ("NvidiaPlanHostCheckSame", "same"),
)
RECORD_CHECK_CODES = {name: i + 1 for i, (_, name) in enumerate(RECORD_CHECKS)}
# NvidiaPlanHostCheckReadAs: a word or same check with its words' format
RECORD_CHECK_READ_AS = "NvidiaPlanHostCheckReadAs"
# NvidiaPlanHostWordFormat constructor -> (format, the word widths it reads: None any) (enum rt_word_format
# in host_runtime.h, from 0: a check that says no format reads unsigned words, as every check did before)
WORD_FORMATS: tuple[tuple[str, str, tuple[int, ...] | None], ...] = (
    ("NvidiaPlanHostWordUnsigned", "unsigned", None),
    ("NvidiaPlanHostWordSigned", "signed", None),
    ("NvidiaPlanHostWordBinary32", "binary32", (4,)),       # IEEE 754-2008 binary32: 4 bytes
    ("NvidiaPlanHostWordBinary64", "binary64", (8,)),       # IEEE 754-2008 binary64: 8 bytes
)


def word_value(w: int, width: int, word_format: str) -> int | float:
    """A record word's bits `w` as the number its check's format reads (runtime_c/host_runtime.c
    signed_word, binary_word): unsigned as they are, signed as two's complement of `width` bytes,
    binary32 and binary64 as IEEE 754 values (a binary32 widened to a Python float exactly, so
    their order is kept)."""
    if word_format == "signed":
        return w - (1 << (8 * width)) if w >> (8 * width - 1) else w
    if word_format in ("binary32", "binary64"):
        wide = word_format == "binary64"
        return struct.unpack("<d" if wide else "<f", w.to_bytes(8 if wide else 4, "little"))[0]
    return w



@dataclass(frozen=True)
class RecordCheck:
    """NvidiaPlanHostRecordCheck: one fact an input record must hold (PlanHostRequest.bob).

    A run is `count` little-endian words `width` bytes wide from `offset`, one every
    `stride` bytes; "word" is a run of one; "bytes" compares `data` at `offset`."""

    kind: str
    what: str
    offset: int
    width: int = 0
    stride: int = 0
    count: int = 1
    value: int = 0            # word: the value; below: the bound
    data: bytes = b""
    other: int = 0            # same: the other run
    other_width: int = 0
    other_stride: int = 0
    format: str = "unsigned"  # how its words are read and printed (a WORD_FORMATS format)

    def end(self) -> int:
        """One past the last byte the check reads."""
        if self.kind == "bytes":
            return self.offset + len(self.data)
        ends = [self.offset + (self.count - 1) * self.stride + self.width] if self.count else [0]
        if self.kind == "same" and self.count:
            ends.append(self.other + (self.count - 1) * self.other_stride + self.other_width)
        return max(ends)


@dataclass(frozen=True)
class Initializer:
    """NvidiaPlanHostInitializer: how one checkpoint chunk starts when there is no checkpoint."""

    kind: str                 # "zero" or "splitmix64"
    seed: bytes = b""
    shift: int = 0
    center: int = 0
    denominator: int = 1
    at: object = field(default=None, compare=False, repr=False)     # field name -> where written


@dataclass(frozen=True)
class RecordLayout:
    """NvidiaPlanHostRequestLayoutValue: the records a request reads and writes."""

    input_magic: bytes
    input_version: int
    input_record_bytes: int
    input_targets_offset: int
    input_prompts_offset: int
    prompt_count: int
    prediction_bytes: int
    result_record_bytes: int
    result_initial_loss_offset: int
    result_training_loss_offset: int
    result_logit_rows_offset: int
    input_checks: tuple[RecordCheck, ...] = ()


@dataclass(frozen=True)
class Constant:
    """NvidiaPlanHostConstant: a binary32 pattern or a ratio of naturals."""

    float32_bits: int | None = None
    numerator: int | None = None
    denominator: int | None = None

    def exact(self) -> Fraction:
        if self.float32_bits is not None:
            import struct
            return Fraction(struct.unpack("<f", struct.pack("<I", self.float32_bits))[0])
        return Fraction(self.numerator, self.denominator)

    def binary64(self) -> float:
        """The binary64 nearest the constant (a binary32 pattern: exactly it)."""
        return float(self.exact())


@dataclass(frozen=True)
class HostPlan:
    """NvidiaPlanHostValue, less the device program (Plan.program) and arena (Plan.arena)."""

    identity: str
    device_hazard: int        # the language's own arena certificate; 0 when sound
    buffers: tuple[PlanBuffer, ...]
    request: RecordLayout
    initializers: tuple[Initializer, ...]   # one per checkpoint chunk
    fills: tuple[Fill, ...]           # the scalars the host computes per invocation
    forward_launches: int
    semaphore_stride: int
    steps: tuple[Step, ...]
