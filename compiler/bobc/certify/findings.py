"""What the certifier reports: one Finding per fault, all of them in one CertificationError."""
from __future__ import annotations

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


class CertificationError(BobcError):
    def __init__(self, faults: list[Finding]):
        lines = "\n".join(f"  - {f.message}" for f in faults)
        super().__init__(f"the plan is not certified ({len(faults)} fault{'s' if len(faults) != 1 else ''}):\n"
                         f"{lines}")
        self.findings = faults


def span(start: int, size: int) -> str:
    return f"[{start:#x}, {start + size:#x})"


def describe(resident: Resident) -> str:
    return f"{resident.name} {span(resident.address, resident.size)}"


def end(r: Resident) -> int:
    return r.address + r.size


