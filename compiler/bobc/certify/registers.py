"""Registers and shared memory: each region's declaration fits the target's SM and covers
what its kernel needs (the bounds: bobc.targets TargetLimits)."""
from __future__ import annotations

from typing import Mapping

from ..plan.model import Plan, place
from ..targets import Target
from .findings import Finding


def check_registers(plan: Plan, needs: Mapping[str, int] | None, target: Target) -> list[Finding]:
    out: list[Finding] = []
    limits = target.limits
    unit = target.sm_resources.thread_register_unit       # registers are allocated in these units
    most, file, threads_most = limits.registers_per_thread, limits.register_file, limits.threads_per_block
    regions = {r.identity: r for r in plan.program.regions}
    for r in plan.program.regions:
        if not 0 <= r.shared_bytes <= limits.static_shared_bytes:
            out.append(Finding("shared", f"region {r.identity} declares {r.shared_bytes} bytes of shared memory; "
                                         f"{target.name} allows 0..{limits.static_shared_bytes} per block",
                               place(r, "shared_bytes")))
        if not 1 <= r.registers <= most:
            out.append(Finding("registers", f"region {r.identity} declares {r.registers} registers; "
                                            f"the hardware allows 1..{most}", place(r, "registers")))
            continue
        if not 1 <= r.block_x <= threads_most:
            out.append(Finding("registers", f"region {r.identity} declares {r.block_x} threads per block; "
                                            f"the hardware allows 1..{threads_most}", place(r, "block_x")))
        allocated = -(-r.registers // unit) * unit
        if allocated * r.block_x > file:
            out.append(Finding("registers", f"region {r.identity}: {r.block_x} threads x {allocated} registers "
                                            f"exceed the {file}-register file of one SM", place(r, "registers")))
    for launch_index, launch in enumerate(plan.program.launches):
        threads = launch.block[0] * launch.block[1] * launch.block[2]
        if 0 <= launch.region < len(plan.program.regions):
            r = plan.program.regions[launch.region]
            allocated = -(-r.registers // unit) * unit
            if threads > threads_most or threads * allocated > file:
                out.append(Finding("registers", f"launch {launch_index} ({launch.identity}): block "
                                                f"{launch.block} of {r.identity} ({r.registers} registers) "
                                                "does not fit one SM", launch.at))
    for identity, need in sorted((needs or {}).items()):
        region = regions.get(identity)
        if region is None:
            out.append(Finding("registers", f"the assembled kernel {identity} belongs to no region of the plan"))
        elif need > region.registers:
            out.append(Finding("registers", f"region {identity} needs {need} registers but declares "
                                            f"{region.registers}", place(region, "registers")))
    return out
