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

from dataclasses import dataclass, make_dataclass
from fractions import Fraction
from typing import ClassVar

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

STEP_KINDS: tuple[StepKind, ...] = (
    StepKind("submit", "NvidiaPlanHostStepSubmit", (
        _f("gp_put", _P + "SubmitGPPut"),
        _f("stride", _P + "SubmitStride", c_type=None, stride_of="gp_put")),
        "issue the ring's entries up to gp_put and wait for each one's semaphore"),
    StepKind("repeat", "NvidiaPlanHostStepRepeat", (
        _f("count", _P + "RepeatCount", c_type=None),
        _f("body", _P + "RepeatBody", kind="steps", c_type=None)),
        "the body count times (strides move with the innermost repeat)", interpreted=False),
    StepKind("read", "NvidiaPlanHostStepRead", (
        _f("file", _P + "ReadFile", kind="file", c_type="int32_t"),
        _f("host", _P + "ReadHost"),
        _f("extent", _P + "ReadExtent"),
        _f("offset", _P + "ReadOffset"),
        _f("stride", _P + "ReadStride", c_type=None, stride_of="offset"),
        _f("tolerate_empty", _P + "ReadTolerateEmpty", c_type="uint32_t")),
        "copy extent bytes at offset of an input file to host"),
    StepKind("write", "NvidiaPlanHostStepWrite", (
        _f("file", _P + "WriteFile", kind="file", c_type="int32_t"),
        _f("host", _P + "WriteHost"),
        _f("extent", _P + "WriteExtent")),
        "append extent bytes at host to an output"),
    StepKind("write_at", "NvidiaPlanHostStepWriteAt", (
        _f("file", _P + "WriteAtFile", kind="file", c_type="int32_t"),
        _f("host", _P + "WriteAtHost"),
        _f("extent", _P + "WriteAtExtent"),
        _f("offset", _P + "WriteAtOffset")),
        "write extent bytes at host over an output from offset"),
    StepKind("operation", "NvidiaPlanHostStepOperation", (),
             "a predict request ends here; a train request goes on"),
    StepKind("checkpoint_begin", "NvidiaPlanHostStepCheckpointBegin", (),
             "the output checkpoint's payload starts empty"),
    StepKind("checkpoint_publish", "NvidiaPlanHostStepCheckpointPublish", (
        _f("updates", _P + "CheckpointPublishUpdates"),
        _f("invocations", _P + "CheckpointPublishInvocations")),
        "finish the output checkpoint (step = input's + updates) and publish it atomically"),
    StepKind("adamw_scalars", None, (
        _f("launch", "launch"),
        _f("update", "update")),
        "write update's AdamW scalars (t = input step + update + 1) into launch's parameter block"),
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
    types = {"nat": int, "file": str, "steps": tuple}
    cls = make_dataclass(_camel(kind.name) + "Step",
                         [(f.name, types[f.kind]) for f in kind.fields],
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
FILE_CODES = {name: i + 1 for i, (_, name) in enumerate(FILES)}
INPUT_FILES = ("input", "checkpoint-in")

MEMORIES = {
    "NvidiaPlanHostSystemMemory": "system",
    "NvidiaPlanHostVideoMemory": "video",
    "NvidiaPlanHostGPUCachedSystemMemory": "gpu-cached-system",
}


# ---- the host's data ----


@dataclass(frozen=True)
class PlanBuffer:
    """NvidiaPlanHostBufferValue: a mapping at `gpu` (and `host` in the process: 0 = not mapped)."""

    name: str
    gpu: int
    host: int
    extent: int
    memory: str               # a MEMORIES value


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


@dataclass(frozen=True)
class AdamWDescription:
    """NvidiaPlanHostAdamWValue: the hyperparameters the host's per-update scalars come from."""

    arithmetic: str           # "binary64"
    learning_rate: Constant
    beta1: Constant
    beta2: Constant
    epsilon: Constant


@dataclass(frozen=True)
class HostPlan:
    """NvidiaPlanHostValue, less the device program (Plan.program) and arena (Plan.arena)."""

    identity: str
    device_hazard: int        # the language's own arena certificate; 0 when sound
    buffers: tuple[PlanBuffer, ...]
    request: RecordLayout
    adamw: AdamWDescription
    adamw_launches: tuple[int, ...]   # update k's AdamW launch
    forward_launches: int
    semaphore_stride: int
    steps: tuple[Step, ...]
