"""What the certifier reports: one Finding per fault, all of them in one CertificationError.

A finding is located where the plan value at fault was written (`at`: the definition or the
expression, as bobc.plan.extract found it: bobc.plan.model.place); one whose values do not say
is located at the native host definition the plan was extracted from, and its line says so."""
from __future__ import annotations

import re
from dataclasses import dataclass

from ..errors import BobcError, Span
from ..plan.model import Resident


@dataclass(frozen=True)
class Finding:
    kind: str          # overlap, misaligned, outside-window, empty, stray-pointer, extent, phase,
    #                    host-overlap, host-buffer, registers, missing-launch, unsubmitted, order, semaphore, plan
    message: str
    at: Span | None = None     # where the value at fault was written (None: nothing says)

    def __str__(self) -> str:
        return self.message


_LAUNCH = re.compile(r"\blaunch (\d+)\b")


def merged(faults: list[Finding]) -> list[Finding]:
    """One finding per distinct fault: findings at one place that differ only in the launch they
    name (the same stray word in each of ten launches of one kernel) become one naming every launch."""
    groups: dict[tuple, list[Finding]] = {}
    for fault in faults:
        groups.setdefault((fault.kind, fault.at, _LAUNCH.sub("launch #", fault.message, count=1)), []).append(fault)
    out = []
    for (kind, at, pattern), members in groups.items():
        if len(members) == 1 or "launch #" not in pattern:
            out += members
            continue
        numbers = [_LAUNCH.search(m.message).group(1) for m in members]
        out.append(Finding(kind, pattern.replace("launch #", f"launches {', '.join(numbers)} "
                                                             f"({len(members)} alike)", 1), at))
    return out


def merged_messages(faults: list[Finding]) -> list[str]:
    return [fault.message for fault in merged(faults)]


class CertificationError(BobcError):
    """Every fault, one line each, each line beginning with where its value was written; the
    error's own place is the first fault's.  `entry` (the host definition's name and place) is
    where a fault whose values do not say is located, and its line says what that place is."""

    def __init__(self, faults: list[Finding], entry: tuple[str, Span | None] | None = None):
        name, fallback = entry if entry is not None else (None, None)
        lines = []
        for fault in merged(faults):
            if fault.at is not None:
                lines.append(f"  - {fault.at}: {fault.message}")
            elif fallback is not None:
                lines.append(f"  - {fallback} (the host {name}, which assembles the plan: the values named "
                             f"here do not say where they were written): {fault.message}")
            else:
                lines.append(f"  - {fault.message}")
        super().__init__(f"the plan is not certified ({len(faults)} fault{'s' if len(faults) != 1 else ''}):\n"
                         + "\n".join(lines),
                         next((f.at for f in faults if f.at is not None), fallback))
        self.findings = faults


def span(start: int, size: int) -> str:
    return f"[{start:#x}, {start + size:#x})"


def describe(resident: Resident) -> str:
    return f"{resident.name} {span(resident.address, resident.size)}"


def end(r: Resident) -> int:
    return r.address + r.size
