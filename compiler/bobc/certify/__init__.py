"""The arena certifier: a Plan is admitted only when its memory and schedule add up.

`findings(plan, target, needs=None)` lists every fault; `certify(...)`
raises CertificationError with all of them (never just the first), so one
run tells the plan's author everything that is wrong.

What is checked (one module per check):
- the device (device.py): the plan's declared architecture and compute class name a
  target, and the build's target can run plans written for it;
- residents (residents.py): non-empty, aligned as declared, each inside one window,
  pairwise disjoint (windows too);
- pointers (pointers.py, with the kernel table in kernels.py): see
  `check_pointers` for the rule;
- host buffers (program, QMD table, pushbuffer, semaphores, and any others
  the plan maps) pairwise disjoint in the GPU address space, the command
  buffers at the images' bases, each window inside a mapped buffer and clear
  of the command buffers (buffers.py);
- registers (registers.py): each region's declaration fits the hardware (<= 255, a block's
  registers within the 64K register file) and covers what the assembled
  kernel needs (`needs`: region identity -> registers, in ptxas's
  convention: highest GPR index + 1 + the 2 that sm_70+ reserves);
- limits (limits.py): what the runtime and the generated C can hold (docs/limits.md);
- schedule (schedule.py): submissions reference existing launches, every launch is
  submitted, launches are first submitted in plan order, semaphores are not
  shared between submissions.
"""
from __future__ import annotations

from typing import Mapping

from ..plan.model import Plan
from ..targets import Target
from .buffers import check_host_buffers, host_buffer_extents
from .device import check_declared_device
from .findings import CertificationError, Finding
from .limits import check_limits
from .pointers import check_pointers
from .registers import check_registers
from .residents import check_residents
from .schedule import check_schedule

__all__ = ["CertificationError", "Finding", "certify", "findings", "host_buffer_extents"]


def findings(plan: Plan, target: Target, needs: Mapping[str, int] | None = None) -> list[Finding]:
    """Every fault of `plan` for `target`; empty when it certifies."""
    return (check_limits(plan, target) + check_declared_device(plan, target) + check_residents(plan) + check_pointers(plan)
            + check_host_buffers(plan, target)
            + check_registers(plan, needs) + check_schedule(plan))


def certify(plan: Plan, target: Target, needs: Mapping[str, int] | None = None) -> None:
    """Return when `plan` certifies; raise CertificationError listing every fault otherwise."""
    faults = findings(plan, target, needs)
    if faults:
        raise CertificationError(faults)
