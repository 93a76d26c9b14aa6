"""What the certifier reports: one Finding per fault, all of them in one CertificationError."""
from __future__ import annotations

import re
from dataclasses import dataclass

from ..errors import BobcError
from ..plan.model import Resident


@dataclass(frozen=True)
class Finding:
    kind: str          # overlap, misaligned, outside-window, empty, stray-pointer, extent, phase,
    #                    host-overlap, host-buffer, registers, missing-launch, unsubmitted, order, semaphore, plan
    message: str

    def __str__(self) -> str:
        return self.message


_LAUNCH = re.compile(r"\blaunch (\d+)\b")


def merged_messages(faults: list[Finding]) -> list[str]:
    """One line per distinct fault: findings that differ only in the launch they name (the same
    stray word in each of ten launches of one kernel) become one line naming every launch."""
    groups: dict[tuple[str, str], list[Finding]] = {}
    for fault in faults:
        groups.setdefault((fault.kind, _LAUNCH.sub("launch #", fault.message, count=1)), []).append(fault)
    lines = []
    for (_, pattern), members in groups.items():
        if len(members) == 1 or "launch #" not in pattern:
            lines += [m.message for m in members]
            continue
        numbers = [_LAUNCH.search(m.message).group(1) for m in members]
        lines.append(pattern.replace("launch #", f"launches {', '.join(numbers)} ({len(members)} alike)", 1))
    return lines


class CertificationError(BobcError):
    def __init__(self, faults: list[Finding]):
        lines = "\n".join(f"  - {line}" for line in merged_messages(faults))
        super().__init__(f"the plan is not certified ({len(faults)} fault{'s' if len(faults) != 1 else ''}):\n"
                         f"{lines}")
        self.findings = faults


def span(start: int, size: int) -> str:
    return f"[{start:#x}, {start + size:#x})"


def describe(resident: Resident) -> str:
    return f"{resident.name} {span(resident.address, resident.size)}"


def end(r: Resident) -> int:
    return r.address + r.size


