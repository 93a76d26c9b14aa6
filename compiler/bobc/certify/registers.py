"""Registers: each region's declaration fits the hardware and covers what its kernel needs."""
from __future__ import annotations

from typing import Mapping

from ..plan.model import Plan
from .findings import Finding

REGISTER_FILE = 65536                # 32-bit registers per SM (sm_80, sm_90)
MAX_REGISTERS = 255
MAX_BLOCK_THREADS = 1024


def check_registers(plan: Plan, needs: Mapping[str, int] | None) -> list[Finding]:
    out: list[Finding] = []
    regions = {r.identity: r for r in plan.program.regions}
    for r in plan.program.regions:
        if not 1 <= r.registers <= MAX_REGISTERS:
            out.append(Finding("registers", f"region {r.identity} declares {r.registers} registers; "
                                            f"the hardware allows 1..{MAX_REGISTERS}"))
            continue
        if not 1 <= r.block_x <= MAX_BLOCK_THREADS:
            out.append(Finding("registers", f"region {r.identity} declares {r.block_x} threads per block; "
                                            f"the hardware allows 1..{MAX_BLOCK_THREADS}"))
        allocated = -(-r.registers // 8) * 8
        if allocated * r.block_x > REGISTER_FILE:
            out.append(Finding("registers", f"region {r.identity}: {r.block_x} threads x {allocated} registers "
                                            f"exceed the {REGISTER_FILE}-register file of one SM"))
    for launch_index, launch in enumerate(plan.program.launches):
        threads = launch.block[0] * launch.block[1] * launch.block[2]
        if 0 <= launch.region < len(plan.program.regions):
            r = plan.program.regions[launch.region]
            allocated = -(-r.registers // 8) * 8
            if threads > MAX_BLOCK_THREADS or threads * allocated > REGISTER_FILE:
                out.append(Finding("registers", f"launch {launch_index} ({launch.identity}): block "
                                                f"{launch.block} of {r.identity} ({r.registers} registers) "
                                                "does not fit one SM"))
    for identity, need in sorted((needs or {}).items()):
        region = regions.get(identity)
        if region is None:
            out.append(Finding("registers", f"the assembled kernel {identity} belongs to no region of the plan"))
        elif need > region.registers:
            out.append(Finding("registers", f"region {identity} needs {need} registers but declares "
                                            f"{region.registers}"))
    return out
