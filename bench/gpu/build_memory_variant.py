#!/usr/bin/env python3
"""An experiment, not a product: Bob's host with some of its buffers in video memory.

bob-host places every buffer (program, QMD table, pushbuffer, semaphores,
GPFIFO, arena) in system memory that the GPU reaches over PCIe
(as Bob.Build.NativeHost declares them).  To see how much of the
per-update GPU time that placement costs, this builds the same plan into a host
whose named buffers are allocated as video memory (BOB_MEM_VIDEO: HBM,
CPU-mapped write-combined through BAR1, which the runtime supports but does not
use for Bob): the extracted plan's buffer list is given video memory for the
named buffers, then built exactly as `bobc build` does.

    python bench/gpu/build_memory_variant.py --video arena -o .device/bench/bob-host-arena-hbm
    python bench/gpu/build_memory_variant.py --video arena,program,qmd,pushbuffer -o ...
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

def build_variant(video: list[str], target, output: Path, plan=pipeline.DEFAULT_ENTRY) -> None:
    """Bob's plan with the named buffers' memory declared as video memory, built as usual."""
    built = pipeline.compile_plan(REPO / "examples/bob/Bob/Build/NativeHost.bob", target)
    buffers = [dict(b) for b in built.plan.extras["buffers"]]
    names = {b["name"] for b in buffers}
    for name in video:
        if name not in names:
            raise SystemExit(f"no buffer named {name} in the plan (it has {', '.join(sorted(names))})")
    for b in buffers:
        if b["name"] in video:
            b["memory"] = "video"
    plan = dataclasses.replace(built.plan, extras={**built.plan.extras, "buffers": buffers})
    generate.build_host(dataclasses.replace(built, plan=plan), target, output)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--video", required=True, help="buffers in video memory, comma-separated")
    parser.add_argument("--target", default="sm_90")
    parser.add_argument("-o", "--output", required=True)
    args = parser.parse_args(argv)
    video = [v for v in args.video.split(",") if v]
    build_variant(video, target_named(args.target), Path(args.output))
    print(f"wrote {args.output}: {', '.join(video)} in video memory, the rest in system memory")
    return 0


if __name__ == "__main__":
    sys.exit(main())
