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
