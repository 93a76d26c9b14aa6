#!/usr/bin/env python3
"""Build the empty-kernel floor host: Bob's plan with every kernel replaced by `EXIT`.

The floor (issue 10, benchmark (e)): the same plan, the same QMDs, the same
pushbuffer, ring, semaphores and schedule as `bob-host`, so the same 33
submissions (one launch + a semaphore release after wait-for-idle each), but
each kernel's machine code is an empty kernel (EXIT, then a self-branch, as
the real kernels end).  Its BOBC_HOST_TIMING file gives the per-submission cost
of our own submission path with no work in it.  Its outputs are meaningless
(nothing is computed), the host still reads its inputs and writes its files.

The stages are bobc.pipeline.compile_plan's and bobc.host.generate.build_host's:
the plan is compiled and certified with its real kernels, then every region's
code is replaced by the empty kernel's, zero-filled to the real code's length
(each region keeps its place, declared registers and shared memory) and the images are encoded again, launch order
included, as the real plan's are.  The empty code is not certified against the
kernels' contracts (it reads none of the parameters they declare): the certifier
refuses such a plan, rightly, so it is not asked.

    python bench/gpu/build_floor_host.py [--target sm_90] -o .device/bench/bob-floor-host
"""
from __future__ import annotations

import argparse
import dataclasses
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
try:
    import bobc  # noqa: F401
except ImportError:
    sys.path.insert(0, str(REPO / "compiler"))

from bobc import pipeline  # noqa: E402
from bobc.host import generate  # noqa: E402
from bobc.sass import assemble  # noqa: E402
from bobc.targets import target_named  # noqa: E402

PLAN = REPO / "examples/bob/Bob/Build/NativeHost.bob"
EMPTY_KERNEL = "    EXIT\ndone:\n    BRA done\n"


def compile_floor(plan_path: Path, target, include=(), entry: str = pipeline.DEFAULT_ENTRY):
    """pipeline.compile_plan's Built, certified with the real kernels, with every region's code the
    empty kernel's and the images encoded again from that plan; and the empty kernel."""
    built = pipeline.compile_plan(plan_path, target, include, entry)
    empty = assemble(EMPTY_KERNEL, target, "<empty kernel>")
    program = built.plan.program
    # each region the empty kernel, then zeros to its real code's length (never executed: EXIT comes
    # first), so the program image keeps the size and the places the plan computed
    regions = type(program.regions)(
        dataclasses.replace(region, code=bytes(empty.code).ljust(max(len(region.code), len(empty.code)), b"\0"))
        for region in program.regions)
    plan = dataclasses.replace(built.plan, program=dataclasses.replace(program, regions=regions))
    images = pipeline.encode(plan, target, getattr(built.program, "search_path", ()))
    return pipeline.Built(program=built.program, plan=plan, images=images), empty


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--plan", default=str(PLAN))
    parser.add_argument("--target", default="sm_90")
    parser.add_argument("-o", "--output", required=True)
    args = parser.parse_args(argv)
    target = target_named(args.target)
    built, empty = compile_floor(Path(args.plan), target)
    kernels = {region.identity: len(region.code) for region in built.plan.program.regions}
    if any(not region.code.startswith(bytes(empty.code)) or region.code[len(empty.code):].strip(b"\0")
           for region in built.plan.program.regions):
        raise SystemExit("a region kept its real kernel: the floor host would not be empty")
    generate.build_host(built, target, Path(args.output))
    print(f"wrote {args.output}: {len(kernels)} regions, each the empty kernel "
          f"({len(empty.code)} bytes, {empty.registers} registers)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
