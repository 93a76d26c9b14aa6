"""The device a plan is written for, against the device it is being built for.

A whole-program plan declares its SASS architecture, compute class and SPA
version (e.g. Hardware.Nvidia.SM86.Command.QMD's: 0x86, AMPERE_COMPUTE_B,
0x86).  Those must name a target bobc knows, consistently, and the build's
target must be able to run plans written for it (targets.py
`builds_plans_for`: an sm_90 build relocates an sm_86 plan's parameters; the
reverse is not possible).
"""
from __future__ import annotations

from ..plan.model import Plan, place
from ..targets import TARGETS, Target, declared_target
from .findings import Finding


def check_declared_device(plan: Plan, target: Target) -> list[Finding]:
    program = plan.program
    declared = declared_target(program.architecture, program.compute_class)
    if declared is None:
        known = ", ".join(f"{t.name} (architecture {t.sm:#x}, compute class {t.compute_class:#06x})"
                          for t in TARGETS.values())
        return [Finding("plan", f"the plan declares architecture {program.architecture:#x} with compute class "
                                f"{program.compute_class:#06x}, which names no target bobc knows ({known})",
                        place(program, "compute_class", "architecture"))]
    faults = []
    if program.spa_version != declared.spa_version:
        faults.append(Finding("plan", f"the plan declares SPA version {program.spa_version:#x} for "
                                      f"{declared.name}, whose SPA version is {declared.spa_version:#x}",
                              place(program, "spa_version")))
    if declared.name not in target.builds_plans_for:
        faults.append(Finding("plan", f"the plan is written for {declared.name} and cannot be built for "
                                      f"{target.name} (it builds plans for {', '.join(target.builds_plans_for)})",
                              place(program, "architecture")))
    return faults
