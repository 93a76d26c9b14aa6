#!/usr/bin/env python3
"""Build the empty-kernel floor host: Bob's plan with every kernel replaced by `EXIT`.

The floor (issue 10, benchmark (e)): the same plan, the same QMDs, the same
pushbuffer, ring, semaphores and schedule as `bob-host`, so the same 33
submissions (one launch + a semaphore release after wait-for-idle each), but
each kernel's machine code is an empty kernel (EXIT, then a self-branch, as
the real kernels end).  Its BOBC_HOST_TIMING file gives the per-submission cost
of our own submission path with no work in it.  Its outputs are meaningless
(nothing is computed), the host still reads its inputs and writes its files.

The stages are bobc.pipeline.compile_plan's and bobc.host.generate.build_host's,
with one difference: the `SM86Program` encoder (bobc.plan.intrinsics) is
replaced by one that returns the empty kernel's code for every kernel.

    python bench/gpu/build_floor_host.py [--target sm_90] -o .device/bench/bob-floor-host
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
try:
    import bobc  # noqa: F401
except ImportError:
    sys.path.insert(0, str(REPO / "compiler"))

from bobc import pipeline  # noqa: E402
from bobc.host import generate  # noqa: E402
from bobc.language.values import VBytes  # noqa: E402
from bobc.plan.intrinsics import default_intrinsics  # noqa: E402
from bobc.sass import assemble  # noqa: E402
from bobc.targets import target_named  # noqa: E402

PLAN = REPO / "examples/bob/Bob/Build/NativeHost.bob"
EMPTY_KERNEL = "    EXIT\ndone:\n    BRA done\n"


def floor_registry(target):
    """The compiler's encoders, with every SM86Program encoded as the empty kernel."""
    registry = default_intrinsics()
    empty = assemble(EMPTY_KERNEL, target, "<empty kernel>")
    empty.kernel_name = "bob_empty"
    registry.encoders.by_code[bytes(empty.code)] = empty   # certify sees its real registers

    def kernel(value, context):
        return VBytes(bytes(empty.code))
    registry.register("SM86Program", kernel)
    return registry, empty


def compile_floor(plan_path: Path, target, include=(), entry: str = pipeline.DEFAULT_ENTRY):
    """pipeline.compile_plan with the floor registry in place of default_intrinsics()."""
    registry, empty = floor_registry(target)
    return pipeline.compile_plan(plan_path, target, include, entry, intrinsics=registry), empty


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--plan", default=str(PLAN))
    parser.add_argument("--target", default="sm_90")
    parser.add_argument("-o", "--output", required=True)
    args = parser.parse_args(argv)
    target = target_named(args.target)
    built, empty = compile_floor(Path(args.plan), target)
    kernels = {region.identity: len(region.code) for region in built.plan.program.regions}
    if any(region.code != bytes(empty.code) for region in built.plan.program.regions):
        raise SystemExit("a region kept its real kernel: the floor host would not be empty")
    generate.build_host(built, target, Path(args.output))
    print(f"wrote {args.output}: {len(kernels)} regions, each the empty kernel "
          f"({len(empty.code)} bytes, {empty.registers} registers)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
