#!/usr/bin/env python3
"""An experiment, not a product: Bob's host with some of its buffers in video memory.

bob-host places every buffer (program, QMD table, pushbuffer, semaphores,
GPFIFO, arena) in system memory that the GPU reaches over PCIe
(runtime_c/plan_host.c load_buffers: BOB_MEM_SYSTEM).  To see how much of the
per-update GPU time that placement costs, this builds the same plan into a host
whose named buffers are allocated as video memory (BOB_MEM_VIDEO: HBM,
CPU-mapped write-combined through BAR1, which the runtime supports but does not
use).  runtime_c/ is not changed: a copy of it is patched in a temporary folder
(one line of load_buffers), then compiled and embedded exactly as
bobc.host.generate.build_host does.

    python bench/gpu/build_memory_variant.py --video arena -o .device/bench/bob-host-arena-hbm
    python bench/gpu/build_memory_variant.py --video arena,program,qmd,pushbuffer -o ...
"""
from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
try:
    import bobc  # noqa: F401
except ImportError:
    sys.path.insert(0, str(REPO / "compiler"))

from bobc import pipeline  # noqa: E402
from bobc.host import gcc, generate, sections  # noqa: E402
from bobc.targets import target_named  # noqa: E402

ALLOCATION = "bob_gpu_alloc_at(&h->gpu, b->gpu_va, b->size, BOB_MEM_SYSTEM, &h->mapped[i]);"
PATCHED = "bob_gpu_alloc_at(&h->gpu, b->gpu_va, b->size, bench_location(b->name), &h->mapped[i]);"
HELPER = """
/* bench/gpu/build_memory_variant.py: these buffers in video memory (an experiment) */
#define BENCH_VIDEO_BUFFERS ",%s,"
static int bench_location(const char *name)
{
    char key[96];
    snprintf(key, sizeof key, ",%%s,", name);
    return strstr(BENCH_VIDEO_BUFFERS, key) ? BOB_MEM_VIDEO : BOB_MEM_SYSTEM;
}
"""


def build_variant(video: list[str], target, output: Path, plan=pipeline.DEFAULT_ENTRY) -> None:
    built = pipeline.compile_plan(REPO / "examples/bob/Bob/Build/NativeHost.bob", target)
    names = {b for b in generate.render(built, target).split('"') if b}
    for name in video:
        if name not in names:
            raise SystemExit(f"no buffer named {name} in the plan")
    with tempfile.TemporaryDirectory(prefix="bob-variant-") as folder:
        runtime = Path(folder) / "runtime_c"
        shutil.copytree(generate.RUNTIME_C, runtime)
        host_c = runtime / "plan_host.c"
        text = host_c.read_text()
        if text.count(ALLOCATION) != 1:
            raise SystemExit("runtime_c/plan_host.c's allocation line changed: update this experiment")
        anchor = '#include "nv_shim.h"\n'
        text = text.replace(ALLOCATION, PATCHED).replace(
            anchor, anchor + HELPER % ",".join(video), 1)
        host_c.write_text(text)
        plan_c = Path(folder) / "host_plan.c"
        plan_c.write_text(generate.render(built, target), encoding="utf-8")
        linked = Path(folder) / "host"
        gcc.build([plan_c, *(runtime / name for name in generate.RUNTIME_SOURCES)], [runtime], linked)
        images = built.images
        sections.embed(linked, {"program": images.program, "qmd": images.qmd, "push": images.push,
                                "gpfifo": images.gpfifo,
                                "manifest": json.dumps(images.manifest, sort_keys=True).encode()})
        output.write_bytes(linked.read_bytes())
        output.chmod(0o755)


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
