#!/usr/bin/env python3
"""An experiment, not a product: Bob's host with some buffers moved to other memory.

bob-host places each buffer where Bob.Build.NativeHost declares it: the arena,
program, QMDs and pushbuffer in video memory (HBM, CPU-mapped write-combined
through BAR1), the semaphores and GPFIFO in system memory.  To measure what
that placement buys, this builds the same plan with the named buffers' memory
overridden, then built exactly as `bobc build` does.

    python bench/gpu/build_memory_variant.py --system arena,program,qmd,pushbuffer \
        -o .device/bench/bob-host-variant-all-system
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
from bobc.targets import target_named  # noqa: E402

def build_variant(memory: dict[str, str], target, output: Path) -> None:
    """Bob's plan with the named buffers' memory (name -> "system" or "video") overridden."""
    built = pipeline.compile_plan(REPO / "examples/bob/Bob/Build/NativeHost.bob", target)
    names = {b.name for b in built.plan.host.buffers}
    for name in memory:
        if name not in names:
            raise SystemExit(f"no buffer named {name} in the plan (it has {', '.join(sorted(names))})")
    buffers = tuple(dataclasses.replace(b, memory=memory.get(b.name, b.memory)) for b in built.plan.host.buffers)
    plan = dataclasses.replace(built.plan, host=dataclasses.replace(built.plan.host, buffers=buffers))
    generate.build_host(dataclasses.replace(built, plan=plan), target, output)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--video", default="", help="buffers to put in video memory, comma-separated")
    parser.add_argument("--system", default="", help="buffers to put in system memory, comma-separated")
    parser.add_argument("--target", default="sm_90")
    parser.add_argument("-o", "--output", required=True)
    args = parser.parse_args(argv)
    memory = {**{v: "video" for v in args.video.split(",") if v},
              **{v: "system" for v in args.system.split(",") if v}}
    if not memory:
        parser.error("name buffers with --video or --system")
    build_variant(memory, target_named(args.target), Path(args.output))
    print(f"wrote {args.output}: " + ", ".join(f"{k} in {v} memory" for k, v in memory.items())
          + "; the rest as the plan declares")
    return 0


if __name__ == "__main__":
    sys.exit(main())
