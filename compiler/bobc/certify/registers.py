"""Registers and shared memory: each region's declaration fits the target's SM and covers
what its kernel needs (the bounds: bobc.targets TargetLimits)."""
from __future__ import annotations

from pathlib import Path
from typing import Mapping

from ..errors import shown_plan_text
from ..plan.model import Plan, place
from ..targets import WARP_THREADS, Target
from .findings import Finding


def check_registers(plan: Plan, needs: Mapping[str, int] | None, target: Target,
                    sources: Mapping[str, Path] | None = None) -> list[Finding]:
    """`sources`: region identity -> the kernel source its code for `target` was assembled from (a
    per-target variant, `<stem>.sm_90.sass`, where the build found one), named in a shortfall."""
    out: list[Finding] = []
    limits = target.limits
    sm = target.sm_resources
    most, threads_most = limits.registers_per_thread, limits.threads_per_block
    block_most = limits.registers_per_block
    regions = {r.identity: r for r in plan.program.regions}

    def block_registers(threads: int, registers: int) -> str | None:
        """Why a block of `threads` threads of `registers` (declared) registers each is not launched
        on `target` (its registers as the GPU's launch check counts them), or None."""
        counted = sm.block_registers(threads, registers)
        if counted <= block_most:
            return None
        warps = -(-threads // WARP_THREADS)
        return (f"{threads} threads of {registers} registers take {counted:,} registers as {target.name} "
                f"counts a block ({warps} warps of {sm.warp_registers(registers):,}, rounded up to a multiple "
                f"of its {sm.sub_partitions} sub-partitions), more than the {block_most:,} a block may have; "
                f"declare fewer registers or launch smaller blocks")

    # a region's shared bytes are its launches' QMD SHARED_MEMORY_SIZE: the block's whole shared memory,
    # which the card gives up to its largest carve-out less the system's reserve, plus the reserve where a
    # block's shared memory begins with it (sm_90: SMResources.block_shared_bytes; what the encoder's
    # carve-out and the simulator's QMD reader hold it to).  ptxas's 48 KiB (TargetLimits.static_shared_bytes)
    # bounds a cubin's static declaration only, which no QMD reads.
    shared_most = sm.block_shared_bytes
    for r in plan.program.regions:
        if not 0 <= r.shared_bytes <= shared_most:
            out.append(Finding("shared", f"region {shown_plan_text(r.identity)} declares {r.shared_bytes} bytes of shared memory; "
                                         f"a block on {target.name} has at most {shared_most} ({sm.block_shared_why})",
                               place(r, "shared_bytes")))
        if not 1 <= r.registers <= most:
            out.append(Finding("registers", f"region {shown_plan_text(r.identity)} declares {r.registers} registers; "
                                            f"the hardware allows 1..{most}", place(r, "registers")))
            continue
        if not 1 <= r.block_x <= threads_most:
            out.append(Finding("registers", f"region {shown_plan_text(r.identity)} declares {r.block_x} threads per block; "
                                            f"the hardware allows 1..{threads_most}", place(r, "block_x")))
        elif (why := block_registers(r.block_x, r.registers)) is not None:
            out.append(Finding("registers", f"region {shown_plan_text(r.identity)}: {why}", place(r, "registers")))
    for launch_index, launch in enumerate(plan.program.launches):
        threads = launch.block[0] * launch.block[1] * launch.block[2]
        if 0 <= launch.region < len(plan.program.regions):
            r = plan.program.regions[launch.region]
            if not 1 <= r.registers <= most:
                continue
            if threads > threads_most:
                out.append(Finding("registers", f"launch {launch_index} ({shown_plan_text(launch.identity)}): block "
                                                f"{launch.block} of {shown_plan_text(r.identity)} has {threads} threads; "
                                                f"the hardware allows 1..{threads_most} per block", launch.at))
            elif threads >= 1 and (why := block_registers(threads, r.registers)) is not None:
                out.append(Finding("registers", f"launch {launch_index} ({shown_plan_text(launch.identity)}): block "
                                                f"{launch.block} of {shown_plan_text(r.identity)}: {why}", launch.at))
    for identity, need in sorted((needs or {}).items()):
        region = regions.get(identity)
        if region is None:
            out.append(Finding("registers", f"the assembled kernel {shown_plan_text(identity)} belongs to no region of the plan"))
        elif need > region.registers:
            # a region's registers are one number for every target its plan is built for, where a per-target
            # listing's needs differ (ptxas gave a new user's kernel 24 on sm_86 and 34 on sm_90, and the
            # sm_90 check said only "needs 34 but declares 24": probe s45 newuser10)
            source = (sources or {}).get(identity)
            code = f"its {target.name} code, {source.name}" if source is not None else f"its {target.name} code"
            out.append(Finding("registers", f"region {shown_plan_text(identity)} needs {need} registers but declares "
                                            f"{region.registers} ({code})", place(region, "registers"),
                               hint=f"declare at least {need} registers for region {shown_plan_text(identity)} (the "
                                    f"region's registers field, NvidiaDeviceRegionValue's third): one number serves "
                                    f"every target the plan is built for, so give the most any target's source needs "
                                    f"(`bobc asm SOURCE --arch TARGET` prints each one's count)"))
    return out
