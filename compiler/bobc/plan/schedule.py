"""The host's step list, lowered once from the typed host plan for both the
generated C host (bobc.host.generate) and the reference runner
(bobc.reference.host): repeats unrolled with each strided field moved by the
innermost repeat's iteration, and each plan fill computed just before the
submission that issues its launch.  Native commands (NvidiaPlanHostStepCommands)
travel as their program bytes (bobc.plan.commands)."""
from __future__ import annotations

from dataclasses import dataclass

from ..errors import BobcError
from .host import STEP_KIND, StepKind


class ScheduleError(BobcError):
    """A schedule this compiler's hosts cannot carry out."""


@dataclass(frozen=True)
class LoweredStep:
    kind: StepKind
    values: dict
    note: str = ""

    @property
    def name(self) -> str:
        return self.kind.name


def unroll(steps, iteration: int = 0):
    """(kind, {field: value}) for every interpreted step, in order."""
    for step in steps:
        kind = step.kind
        if kind.name == "repeat":
            for i in range(step.count):
                yield from unroll(step.body, i)
            continue
        values = {f.name: getattr(step, f.name) for f in kind.fields}
        for f in kind.fields:
            if f.stride_of:
                values[f.stride_of] += iteration * values[f.name]
        yield kind, values


def lower(plan) -> list[LoweredStep]:
    """The plan's schedule as the hosts carry it out (files still by name)."""
    submissions = plan.program.submissions
    fills_of: dict[int, list[int]] = {}
    for index, fill in enumerate(plan.host.fills):
        fills_of.setdefault(fill.launch, []).append(index)
    out: list[LoweredStep] = []
    gp_put = 0
    for kind, values in unroll(plan.host.steps):
        note = f"{kind.name} {values['file']}" if "file" in values else kind.name
        if kind.name == "submit":
            end = values["gp_put"]
            if end > len(submissions):
                raise ScheduleError(f"the schedule submits up to entry {end}; the plan has "
                                    f"{len(submissions)} submissions")
            for index in range(gp_put, end):
                for launch in submissions[index].launches:
                    for fill in fills_of.get(launch, ()):
                        out.append(LoweredStep(STEP_KIND["scalar_fill"], {"fill": fill},
                                               f"fill {fill} into launch {launch}"))
            note = f"submissions {gp_put}..{end - 1}"
            gp_put = max(gp_put, end)
        elif kind.name == "reissue":
            for launch in submissions[values["piece"]].launches if values["piece"] < len(submissions) else ():
                for fill in fills_of.get(launch, ()):
                    out.append(LoweredStep(STEP_KIND["scalar_fill"], {"fill": fill},
                                           f"fill {fill} into launch {launch}"))
        out.append(LoweredStep(kind, values, note))
    return out


def checkpoint_refusal(steps, operation: str) -> str | None:
    """What a request without --checkpoint is refused with (exit 2, a usage error: an option the
    plan needs is missing, as `missing --input RECORD` is), or None where it starts from the plan's
    fresh state.  `steps`: the lowered schedule (lower()).  The first Read of the input checkpoint
    whose tolerateEmpty is 0 among the steps the request carries out (a predict stops at its first
    Operation step) refuses it: specs/Platform/Linux/Nvidia/PlanHost.bob, NvidiaPlanHostStepRead,
    "with tolerateEmpty 1 a request without the file is accepted".  The one wording of the C host
    (runtime_c/plan_host.c checkpoint_required), `bobc run --reference` and `bobc sim`; the step
    is numbered as the hosts number their steps (the lowered schedule's index)."""
    for index, step in enumerate(steps):
        if step.name == "operation" and operation == "predict":
            return None
        if step.name == "read" and step.values["file"] == "checkpoint-in" and step.values["tolerate_empty"] == 0:
            return (f"missing --checkpoint CHECKPOINT: the schedule's step {index} (read) reads the input "
                    f"checkpoint with tolerateEmpty 0, so this plan starts no {operation} request from its fresh "
                    f"state; pass --checkpoint FILE, a checkpoint a run of this plan wrote with --checkpoint-out")
    return None


def publication_count(steps, operation: str) -> int:
    """How many checkpoints a request publishes: the CheckpointPublish steps of `steps` (the
    lowered schedule) it carries out, a predict stopping at its first Operation step
    (runtime_c/plan_host.c count_publications)."""
    total = 0
    for step in steps:
        if step.name == "operation" and operation == "predict":
            break
        total += step.name == "checkpoint_publish"
    return total


CHECKPOINT_OPTIONAL, CHECKPOINT_TRAIN_NEEDS, CHECKPOINT_NEEDED = 0, 1, 2   # runtime_c's RT_CHECKPOINT_*


def checkpoint_needed(steps) -> int:
    """How the plan takes --checkpoint, for its --help (runtime_c/host_runtime.c rt_print_usage):
    CHECKPOINT_NEEDED where a predict too is refused without one (checkpoint_refusal), else
    CHECKPOINT_TRAIN_NEEDS where a train is, else CHECKPOINT_OPTIONAL."""
    if checkpoint_refusal(steps, "predict"):
        return CHECKPOINT_NEEDED
    return CHECKPOINT_TRAIN_NEEDS if checkpoint_refusal(steps, "train") else CHECKPOINT_OPTIONAL
