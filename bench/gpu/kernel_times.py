#!/usr/bin/env python3
"""Each of Bob's kernels timed alone on the GPU, from our own cubins, in device memory.

The host's per-kernel figures (bob_bench.py) include the submission, the
wait-for-idle and the semaphore release of each launch.  This times the
kernels themselves: each source is assembled by bobc for the GPU's target,
wrapped in a cubin (bobc.sass.cubin), loaded with CuPy and launched with the
launch shape of seed 001 on arrays in device memory shaped like Bob's; a run
of launches is captured in a CUDA graph (so Python's launch cost is not what
is measured) and replayed between CUDA events; per launch = elapsed / launches.  Extra sources named
<kernel>@<label>.sass in --extra are timed beside Bob's own (to compare a
rewrite with what it replaces); each extra is first checked to give the same
outputs as Bob's own within the kernel tests' tolerances.

    python3 bench/gpu/kernel_times.py [--extra DIR] [--out kernels.json]
"""
from __future__ import annotations

import argparse
import json
import statistics
import struct
import sys
import tempfile
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[2]
try:
    import bobc  # noqa: F401
except ImportError:
    sys.path.insert(0, str(REPO / "compiler"))

from bobc.sass import assemble_kernel  # noqa: E402
from bobc.sass.cubin import write_cubin  # noqa: E402
from bobc.targets import TARGETS  # noqa: E402

KERNELS = REPO / "specs" / "Realization" / "Nvidia" / "SM86"
# seed 001's launch shapes: grid x, block x
SHAPES = {"bob-row-gather": (1, 64), "bob-loss-gradient": (1, 256), "bob-adamw": (256, 256),
          "bob-greedy-argmax": (1, 1)}


def f32pair(a, b) -> int:
    return int(np.frombuffer(struct.pack("<ff", a, b), dtype=np.uint64)[0])


def arguments(cp, name: str, rng) -> tuple[list, dict]:
    """Device arrays shaped like Bob's and the kernel's eight parameter words."""
    P = cp.asarray((rng.standard_normal(65536) * 0.5).astype(np.float32))
    if name == "bob-loss-gradient":
        arrays = {"P": P, "G": cp.zeros(65536, cp.float32),
                  "T": cp.asarray(rng.integers(0, 256, 256).astype(np.uint32)), "L": cp.zeros(256, cp.float32)}
        words = [arrays["P"].data.ptr, arrays["G"].data.ptr, arrays["T"].data.ptr, arrays["L"].data.ptr, 0, 0,
                 f32pair(1.4426950408889634, 0.6931471805599453), f32pair(1.0 / 256, 0.0)]
    elif name == "bob-adamw":
        arrays = {"P": P, "G": cp.asarray((rng.standard_normal(65536) * 1e-3).astype(np.float32)),
                  "M": cp.zeros(65536, cp.float32), "V": cp.zeros(65536, cp.float32)}
        scalars = struct.pack("<fffffffII", 0.1, 1e-8, 0.999, 0.9, 0.1, 0.999, 0.001, 65536, 1) + bytes(4)
        words = [arrays[k].data.ptr for k in "PGMV"] + list(np.frombuffer(scalars, dtype=np.uint64))
    elif name == "bob-row-gather":
        arrays = {"R": cp.zeros(256, cp.float32), "B": cp.asarray(np.array([65], np.uint32)), "P": P}
        words = [arrays["R"].data.ptr, arrays["B"].data.ptr, arrays["P"].data.ptr, 0, 0, 0, 0, 0]
    else:
        arrays = {"O": cp.zeros(2, cp.uint32), "R": P[:256]}
        words = [arrays["O"].data.ptr, arrays["R"].data.ptr, 0, 0, 0, 0, 0, 0]
    return [np.uint64(w) for w in words], arrays


def load(cp, source: Path, target, block_x: int, folder: Path):
    assembled = assemble_kernel(source, target)
    image = write_cubin(assembled, assembled.kernel_name, target, 64, block_x)
    path = folder / (source.stem + ".cubin")
    path.write_bytes(image)
    module = cp.RawModule(path=str(path))
    return module, module.get_function(assembled.kernel_name)


def time_kernel(cp, fn, shape, words, launches: int, samples: int) -> list[float]:
    grid, block = shape
    stream = cp.cuda.Stream(non_blocking=True)
    stream.begin_capture()
    for _ in range(launches):
        fn((grid,), (block,), words, stream=stream)
    graph = stream.end_capture()
    graph.launch(stream)
    stream.synchronize()
    out = []
    for _ in range(samples):
        start, stop = cp.cuda.Event(), cp.cuda.Event()
        start.record(stream)
        graph.launch(stream)
        stop.record(stream)
        stop.synchronize()
        out.append(cp.cuda.get_elapsed_time(start, stop) * 1000.0 / launches)
    return out


def outputs(cp, fn, shape, name, seed):
    words, arrays = arguments(cp, name, np.random.default_rng(seed))
    fn((shape[0],), (shape[1],), words)
    cp.cuda.Device().synchronize()
    return {k: v.get() for k, v in arrays.items()}


def main(argv=None) -> int:
    import cupy as cp

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--extra", type=Path, help="folder of <kernel>@<label>.sass sources to time too")
    parser.add_argument("--launches", type=int, default=200)
    parser.add_argument("--samples", type=int, default=20)
    parser.add_argument("--out", type=Path)
    args = parser.parse_args(argv)
    target = TARGETS[f"sm_{cp.cuda.Device().compute_capability}"]
    sources = [(k, "bob", KERNELS / f"{k}.sass") for k in SHAPES]
    if args.extra and args.extra.is_dir():
        for path in sorted(args.extra.glob("*@*.sass")):
            kernel, label = path.stem.split("@", 1)
            if kernel in SHAPES:
                sources.append((kernel, label, path))
    results = {"target": target.name, "device": cp.cuda.runtime.getDeviceProperties(0)["name"].decode(),
               "launches_per_sample": args.launches, "kernels": []}
    with tempfile.TemporaryDirectory() as tmp:
        reference = {}
        for kernel, label, path in sources:
            folder = Path(tmp) / f"{kernel}@{label}"
            folder.mkdir()
            _, fn = load(cp, path, target, SHAPES[kernel][1], folder)
            got = outputs(cp, fn, SHAPES[kernel], kernel, seed=7)
            agrees = None
            if label == "bob":
                reference[kernel] = got
            else:
                agrees = all(np.allclose(got[k], reference[kernel][k], rtol=1e-4, atol=2e-9, equal_nan=True)
                             for k in got)
            words, _arrays = arguments(cp, kernel, np.random.default_rng(7))
            times = time_kernel(cp, fn, SHAPES[kernel], words, args.launches, args.samples)
            row = {"kernel": kernel, "source": label, "median_us": statistics.median(times),
                   "min_us": min(times), "max_us": max(times), "agrees_with_bob": agrees}
            results["kernels"].append(row)
            print(f"{kernel:20s} {label:12s} {row['median_us']:8.2f} us per launch "
                  f"[{row['min_us']:.2f}, {row['max_us']:.2f}]"
                  + ("" if agrees is None else f"  outputs agree with bob's: {agrees}"), flush=True)
    if args.out:
        args.out.write_text(json.dumps(results, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
